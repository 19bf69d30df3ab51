// A small MCP server over stdio for the fault tests (tests/test_mcp.c): MODE picks how it misbehaves.
//   ok          answers the handshake and the tool "echo"
//   exit        exits with status 3 at once
//   garbage     writes lines that are not JSON-RPC, forever
//   silent      answers the handshake, never a tool call
//   die-once    dies in the middle of its first tool call (a marker file, argv[3], remembers it did)
//   paged       lists its tools over three pages, then changes its list when "grow" is called
//   slow        answers a tool call after 20 s; each notifications/cancelled is appended to argv[3]
//   gated       appends "initialize" to argv[3] when the handshake comes, and answers it only once the file
//               argv[3].open exists (a server that is slow to start, held open by the test)
//   asks        on a tool call, first sends requests of its own with hostile ids (written as raw text: JS
//               numbers cannot hold them), appends every line it reads to argv[3], and answers the call
//               once the client has answered all seven
const fs = require('fs');
const mode = process.argv[2] || 'ok';
const marker = process.argv[3];
if (mode === 'exit') process.exit(3);
if (mode === 'garbage') {
  const spam = () => { process.stdout.write('this is not json\n'.repeat(100)); setTimeout(spam, 50); };
  spam();
}
let tools = [
  {name: 'echo', description: 'Echoes', inputSchema: {type: 'object', properties: {text: {type: 'string'}}},
   annotations: {readOnlyHint: true}},
  {name: 'grow', description: 'Adds a tool', inputSchema: {type: 'object'}},
];
const send = (m) => process.stdout.write(JSON.stringify(Object.assign({jsonrpc: '2.0'}, m)) + '\n');
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (mode === 'asks' && marker) fs.appendFileSync(marker, line + '\n');
    if (line.trim()) handle(JSON.parse(line));
  }
});
process.stdin.on('end', () => process.exit(0));
const asks = ['9000000001999981', '-9007199254740991', '"s-1"', '-1e999', '9007199254740993', '1.5'];
let asked = null, answers = 0;
function handle(m) {
  if (mode === 'garbage') return;
  if (mode === 'asks' && m.method === undefined && asked) {
    if (++answers === asks.length + 1) send({id: asked, result: {content: [{type: 'text', text: 'asked'}]}});
    return;
  }
  if (mode === 'asks' && m.method === 'tools/call') {
    asked = m.id;
    for (const id of asks) process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"method":"ping"}\n');
    return process.stdout.write('[{"jsonrpc":"2.0","id":8999999999999999,"method":"ping"}]\n');
  }
  if (m.method === 'notifications/cancelled') return marker && fs.appendFileSync(marker, 'cancelled ' + m.params.requestId + ' ' + m.params.reason + '\n');
  if (m.method === 'initialize' && mode === 'gated' && !m.gate) {
    fs.appendFileSync(marker, 'initialize\n');
    const open = () => fs.existsSync(marker + '.open') ? handle(Object.assign({}, m, {gate: true})) : setTimeout(open, 20);
    return open();
  }
  if (m.method === 'initialize') return send({id: m.id, result: {protocolVersion: '2025-03-26', capabilities: {tools: {listChanged: true}}, serverInfo: {name: 'fake', version: '1'}}});
  if (m.method === 'tools/list') {
    if (mode !== 'paged') return send({id: m.id, result: {tools}});
    const page = Number((m.params && m.params.cursor) || 0);
    const next = page + 1 < tools.length ? String(page + 1) : undefined;
    return send({id: m.id, result: Object.assign({tools: [tools[page]]}, next ? {nextCursor: next} : {})});
  }
  if (m.method !== 'tools/call') return m.id !== undefined && send({id: m.id, error: {code: -32601, message: 'no'}});
  if (mode === 'silent') return;
  if (mode === 'slow') return setTimeout(() => send({id: m.id, result: {content: [{type: 'text', text: 'late'}]}}), 20000);
  if (mode === 'die-once' && !fs.existsSync(marker)) { fs.writeFileSync(marker, 'died'); process.exit(9); }
  const name = m.params.name;
  if (name === 'grow') {
    tools.push({name: 'extra' + tools.length, inputSchema: {type: 'object'}});
    send({id: m.id, result: {content: [{type: 'text', text: 'grown'}]}});
    return send({method: 'notifications/tools/list_changed'});
  }
  const args = m.params.arguments || {};
  if (args.env_error) return send({id: m.id, error: {code: -32000, message: 'denied for header Bearer ' + process.env[args.env_error]}});
  if (args.env) return send({id: m.id, result: {content: [{type: 'text', text: 'env ' + args.env + '=' + process.env[args.env]}]}});
  send({id: m.id, result: {content: [{type: 'text', text: 'echo: ' + (args.text || '') + ' pid ' + process.pid}]}});
}
