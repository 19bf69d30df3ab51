// Checks docs/openapi.json, the OpenAPI 3.1 document of agora serve's API, with third-party validators
// from npm (installed into $AGORA_PEERS by the peers fixture):
//   node openapi_check.js doc DOC            the document against the OpenAPI 3.1 schema
//                                            (@seriousme/openapi-schema-validator), its $refs resolved, and
//                                            each of its schemas compiled by Ajv (JSON Schema 2020-12, strict)
//   node openapi_check.js traffic DOC TRACE...  each exchange the API tests recorded (AGORA_API_TRACE,
//                                            tests/support/serve_client.c) against the document
// Exit status 0, or 1 with one line per problem on stderr.
"use strict";
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");
const peers = process.env.AGORA_PEERS + "/node_modules/";
const Ajv2020 = require(peers + "ajv/dist/2020").default;
const addFormats = require(peers + "ajv-formats").default;

// Statuses the server answers before (or instead of) routing: a request may get them on any path.
const BEFORE_ROUTE = new Set([400, 401, 403, 404, 413, 503]);

function newAjv(strict) {
  const ajv = new Ajv2020({ strict, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addKeyword("example");
  return ajv;
}

async function checkDoc(file) {
  const { Validator } = await import(pathToFileURL(peers + "@seriousme/openapi-schema-validator/index.js"));
  const v = new Validator();
  let doc = JSON.parse(fs.readFileSync(file, "utf8"));
  const res = await v.validate(doc);
  const problems = [];
  if (!res.valid && !Array.isArray(res.errors)) problems.push(String(res.errors)); // an unresolvable $ref
  else if (!res.valid) for (const e of res.errors) problems.push(`${e.instancePath || "/"}: ${e.message} ${JSON.stringify(e.params)}`);
  if (v.version !== "3.1") problems.push(`openapi ${v.version}: expected 3.1`);
  try { v.resolveRefs(); } catch (e) { problems.push(`$ref: ${e.message}`); }
  // The validator checks the document's shape; Ajv, strict, that every schema in it is a schema (a
  // misspelt keyword or a $ref to nothing is an error, not a schema that accepts everything).
  // (The named schemas as one schema's $defs: the rest of the document is no schema for a strict Ajv.)
  const asDefs = (o) => JSON.parse(JSON.stringify(o).replace(/"#\/components\/schemas\//g, '"#/$defs/'));
  doc = JSON.parse(fs.readFileSync(file, "utf8")); // a fresh copy: resolveRefs replaced the $refs in place
  const defs = asDefs(doc.components.schemas);
  const ajv = newAjv(true);
  const compile = (where, schema) => {
    try { ajv.compile({ $defs: defs, ...asDefs(schema) }); } catch (e) { problems.push(`${where}: ${e.message}`); }
  };
  for (const name of Object.keys(defs)) compile(`components/schemas/${name}`, { $ref: `#/components/schemas/${name}` });
  // and every schema of a parameter, a header or a body, wherever it is
  const walk = (o, where) => {
    if (!o || typeof o !== "object") return;
    for (const [k, v] of Object.entries(o)) {
      if (k === "schema" || k === "x-frame-schema") compile(`${where}/${k}`, v);
      else if (k !== "schemas") walk(v, `${where}/${k}`);
    }
  };
  walk(doc, "");
  return problems;
}

// The document's paths as [template, regex, literal segment count], most literal first (a concrete
// path wins over a template, as OpenAPI says).
function pathTable(doc) {
  return Object.keys(doc.paths).map((t) => {
    const names = [];
    const src = t.replace(/[.]/g, "\\.").replace(/\{([^}]+)\}/g, (_, n) => (names.push(n), "([^/]+)"));
    return { t, re: new RegExp(`^${src}$`), names, literal: t.split("/").filter((s) => s && s[0] !== "{").length };
  }).sort((a, b) => b.literal - a.literal);
}

function mediaOf(type) { return (type || "").split(";")[0].trim().toLowerCase(); }

// A query or path value as its schema types it ("12" for an integer is 12).
function typed(value, schema) {
  const t = schema && (schema.type || (schema.enum && typeof schema.enum[0]) || (schema.const !== undefined && typeof schema.const));
  if ((t === "integer" || t === "number") && /^-?[0-9]+(\.[0-9]+)?$/.test(value)) return Number(value);
  return value;
}

function checker(doc) {
  const ajv = newAjv(false);
  ajv.addSchema(doc, "doc");
  const ptr = (parts) => "doc#/" + parts.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
  const resolve = (o) => {
    while (o && o.$ref) o = o.$ref.split("/").slice(1).reduce((a, k) => a[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
    return o;
  };
  const table = pathTable(doc);
  const seen = new Set();

  // Problems of one exchange r ({method, path, status, req, resp, resp_type, ...}), as strings.
  function check(r) {
    const out = [];
    const [p, q = ""] = r.path.split("?");
    const hit = table.find((e) => e.re.test(p));
    if (!hit) {
      if (!BEFORE_ROUTE.has(r.status)) out.push(`no such path in the document, but answered ${r.status}`);
      return out;
    }
    const item = doc.paths[hit.t];
    const method = r.method === "HEAD" ? "get" : r.method.toLowerCase();
    const op = item[method];
    if (!op) {
      if (r.status !== 405 && !BEFORE_ROUTE.has(r.status)) out.push(`${hit.t} has no ${r.method}, but answered ${r.status}`);
      return out;
    }
    seen.add(`${method} ${hit.t}`);
    const resp = resolve(op.responses[String(r.status)] || op.responses.default);
    if (!resp) return out.concat(`status ${r.status} is not documented for ${r.method} ${hit.t}`);
    const opPtr = ["paths", hit.t, method];
    const params = (op.parameters || []).map(resolve);
    const ok = r.status >= 200 && r.status < 300;
    if (ok) { // a request the server took must be one the document describes
      const values = hit.re.exec(p).slice(1).map(decodeURIComponent);
      const sp = new URLSearchParams(q);
      for (const prm of params) {
        const v = prm.in === "path" ? values[hit.names.indexOf(prm.name)] : prm.in === "query" ? sp.get(prm.name) : undefined;
        if (prm.in === "header") continue;
        if (v === null || v === undefined) {
          if (prm.required) out.push(`${prm.in} parameter ${prm.name} is required`);
          continue;
        }
        const validate = ajv.compile(prm.schema);
        if (!validate(typed(v, prm.schema))) out.push(`${prm.in} parameter ${prm.name}=${v}: ${ajv.errorsText(validate.errors)}`);
      }
      for (const key of new Set(sp.keys())) // a query parameter the server took must be one the document lists
        if (!params.some((prm) => prm.in === "query" && prm.name === key)) out.push(`query parameter ${key} is not documented`);
      const rb = op.requestBody && resolve(op.requestBody);
      const hasBody = r.req !== null && r.req !== undefined && r.req.trim() !== "";
      if (rb && rb.required && !hasBody && !r.req_omitted) out.push("the request body is required");
      if (rb && hasBody && rb.content["application/json"]) {
        let body;
        try { body = JSON.parse(r.req); } catch (e) { out.push(`the request body is not JSON: ${e.message}`); }
        const validate = ajv.getSchema(ptr([...opPtr, "requestBody", "content", "application/json", "schema"]));
        if (body !== undefined && !validate(body)) out.push(`request body: ${ajv.errorsText(validate.errors)}`);
      } else if (!rb && hasBody) out.push("a request body where the document has none");
    }
    if (r.method === "HEAD" || !resp.content) return out;
    const media = mediaOf(r.resp_type);
    if (!resp.content[media]) return out.concat(`Content-Type ${r.resp_type} is not documented for ${r.status}`);
    if (r.frames && resp.content[media]["x-frame-schema"]) { // an event stream: each frame's data
      const validate = ajv.getSchema("doc" + resp.content[media]["x-frame-schema"].$ref);
      r.frames.forEach((f, k) => {
        let data;
        try { data = JSON.parse(f); } catch (e) { return out.push(`frame ${k + 1} is not JSON: ${e.message}`); }
        if (!validate(data)) out.push(`frame ${k + 1} (${f.slice(0, 80)}): ${ajv.errorsText(validate.errors)}`);
      });
    }
    if (media !== "application/json" || r.resp_omitted) return out;
    let body;
    try { body = JSON.parse(r.resp); } catch (e) { return out.concat(`the response is not JSON: ${e.message}`); }
    const respPtr = op.responses[String(r.status)] ? [...opPtr, "responses", String(r.status)] : [...opPtr, "responses", "default"];
    const ref = op.responses[respPtr[respPtr.length - 1]].$ref;
    const schemaPtr = ref ? ref.split("/").slice(1).concat(["content", media, "schema"]) : [...respPtr, "content", media, "schema"];
    const validate = ajv.getSchema(ptr(schemaPtr));
    if (!validate(body)) out.push(`response body: ${ajv.errorsText(validate.errors)}`);
    return out;
  }
  return { check, seen };
}

function checkTraffic(docFile, traces) {
  const doc = JSON.parse(fs.readFileSync(docFile, "utf8"));
  const { check, seen } = checker(doc);
  const problems = [];
  let n = 0;
  for (const f of traces) {
    const lines = fs.readFileSync(f, "utf8").split("\n");
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      const r = JSON.parse(line);
      n++;
      for (const p of check(r)) problems.push(`${path.basename(f)}:${i + 1}: ${r.method} ${r.path} -> ${r.status}: ${p}`);
    });
  }
  const ops = Object.entries(doc.paths).flatMap(([t, item]) => Object.keys(item).map((m) => `${m} ${t}`));
  const missed = ops.filter((o) => !seen.has(o));
  console.log(`${n} exchanges from ${traces.length} file(s); ${ops.length - missed.length} of ${ops.length} operations exercised`);
  if (missed.length) console.log(`not exercised: ${missed.join(", ")}`);
  if (!n) problems.push("no exchanges recorded");
  return problems;
}

async function main() {
  const [cmd, doc, ...rest] = process.argv.slice(2);
  let problems;
  if (cmd === "doc" && doc) problems = await checkDoc(doc);
  else if (cmd === "traffic" && doc) problems = checkTraffic(doc, rest);
  else {
    console.error("usage: openapi_check.js doc DOC | traffic DOC TRACE...");
    process.exit(2);
  }
  for (const p of problems) console.error(p);
  if (problems.length) console.error(`${problems.length} problem(s)`);
  process.exit(problems.length ? 1 : 0);
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
