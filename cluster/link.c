/* NATS connections, the stream and its consumer (see link.h). */
#include "cluster/link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *link_error(natsStatus s, char *buf, size_t cap) {
  natsStatus last = NATS_OK;
  const char *detail = nats_GetLastError(&last);
  if (!detail || !detail[0] || last != s) detail = natsStatus_GetText(s);
  /* libnats prefixes its source position, "(conn.c:1905): ": not for people. */
  const char *p = detail[0] == '(' ? strstr(detail, "): ") : NULL;
  snprintf(buf, cap, "%s", p ? p + 3 : detail);
  return buf;
}

/* The CA bundle for tls://: --nats-ca, then the OpenSSL and curl conventions (as the LLM providers);
 * *from names where it came from. */
static const char *link_ca(const cluster_opts *o, const char **from) {
  static const char *const vars[] = {"SSL_CERT_FILE", "CURL_CA_BUNDLE"};
  *from = "--nats-ca";
  if (o->ca_file && o->ca_file[0]) return o->ca_file;
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    if (v && v[0]) return *from = vars[i], v;
  }
  return NULL;
}

/* Files named for the connection must be readable: libnats' own report of a missing one says little. */
static int link_files(const cluster_opts *o, ag_errmsg *em) {
  const char *from = NULL, *ca = strstr(o->url, "tls://") ? link_ca(o, &from) : NULL;
  if (ca && access(ca, R_OK)) return ag_fail(em, AG_ERR_INVALID, "%s %s: %s", from, ca, strerror(errno));
  if (o->creds && access(o->creds, R_OK))
    return ag_fail(em, AG_ERR_INVALID, "--nats-creds %s: %s", o->creds, strerror(errno));
  return AG_OK;
}

static natsStatus link_auth(natsOptions *no, const cluster_opts *o) {
  natsStatus s = NATS_OK;
  const char *token = getenv("AGORA_NATS_TOKEN"), *user = getenv("AGORA_NATS_USER");
  if (o->creds) s = natsOptions_SetUserCredentialsFromFiles(no, o->creds, NULL);
  if (s == NATS_OK && token && token[0]) s = natsOptions_SetToken(no, token);
  if (s == NATS_OK && user && user[0]) s = natsOptions_SetUserInfo(no, user, getenv("AGORA_NATS_PASSWORD"));
  int tls = strstr(o->url, "tls://") != NULL;
  const char *from = NULL, *ca = tls ? link_ca(o, &from) : NULL;
  if (s == NATS_OK && tls) s = natsOptions_SetSecure(no, true);
  if (s == NATS_OK && ca) s = natsOptions_LoadCATrustedCertificates(no, ca);
  return s;
}

/* "url,url,...": each server of the cluster, so that a connection moves on when its node goes. */
static natsStatus link_servers(natsOptions *no, const char *urls) {
  char *copy = strdup(urls), *save = NULL;
  const char *list[16];
  int n = 0;
  if (!copy) return NATS_NO_MEMORY;
  for (char *tok = strtok_r(copy, ", ", &save); tok && n < 16; tok = strtok_r(NULL, ", ", &save)) list[n++] = tok;
  natsStatus s = n ? natsOptions_SetServers(no, list, n) : NATS_INVALID_ARG;
  free(copy);
  return s;
}

int link_connect(const cluster_opts *o, const char *name, natsConnection **out, ag_errmsg *em) {
  natsOptions *no = NULL;
  char why[256];
  int rc = link_files(o, em);
  if (rc) return rc;
  natsStatus s = natsOptions_Create(&no);
  if (s == NATS_OK) s = link_servers(no, o->url);
  if (s == NATS_OK) s = natsOptions_SetName(no, name);
  if (s == NATS_OK) s = natsOptions_SetTimeout(no, 2000);
  /* Once connected, never give up: a partition or a node restart ends in a reconnect. */
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(no, -1);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(no, 200);
  if (s == NATS_OK) s = natsOptions_SetReconnectBufSize(no, 64 << 20);
  if (s == NATS_OK) s = natsOptions_SetPingInterval(no, 1000);
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(no, 3);
  if (s == NATS_OK) s = natsOptions_SetMaxPendingMsgs(no, 1 << 20);
  /* A publish is written at once, by the thread that publishes (libnats' flusher thread would hold each
   * one back up to a millisecond to batch it); the deadline bounds that write when a server stalls. */
  if (s == NATS_OK) s = natsOptions_SetSendAsap(no, true);
  if (s == NATS_OK) s = natsOptions_SetWriteDeadline(no, 2000);
  if (s == NATS_OK && (s = link_auth(no, o)) != NATS_OK) {
    natsOptions_Destroy(no);
    return ag_fail(em, AG_ERR_INVALID, "NATS credentials or TLS settings: %s", link_error(s, why, sizeof why));
  }
  if (s == NATS_OK) s = natsConnection_Connect(out, no);
  natsOptions_Destroy(no);
  if (s != NATS_OK)
    return ag_fail(em, AG_ERR_INVALID, "cannot connect to NATS at %s: %s", o->url, link_error(s, why, sizeof why));
  return AG_OK;
}

/* Whether the server said it has no JetStream: a server started without it has no responder on the JS API
 * (NATS_NO_RESPONDERS); one with JetStream off for the account answers 10039, off altogether 10076. Any
 * other refusal (no leader yet, a timeout while a cluster starts) is given as the server's own words. */
static int link_js_off(natsStatus s, jsErrCode jerr) {
  return s == NATS_NO_RESPONDERS || jerr == JSNotEnabledErr || jerr == JSNotEnabledForAccountErr;
}

int link_stream(jsCtx *js, const char *stream, const char *subjects, int replicas, long probe_ms, uint64_t *last,
                ag_errmsg *em) {
  jsStreamInfo *si = NULL;
  jsErrCode jerr = 0;
  char why[256];
  jsOptions probe;
  jsOptions_Init(&probe);
  probe.Wait = probe_ms;
  natsStatus s = js_GetStreamInfo(&si, js, stream, probe_ms ? &probe : NULL, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) {
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = stream;
    cfg.Subjects = &subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_FileStorage;
    cfg.Replicas = replicas;
    cfg.Duplicates = (int64_t)10 * 60 * 1000 * 1000 * 1000; /* the de-duplication window, ns */
    s = js_AddStream(&si, js, &cfg, NULL, &jerr);
    if (s != NATS_OK && jerr == JSStreamNameExistErr) s = js_GetStreamInfo(&si, js, stream, NULL, &jerr);
  }
  if (s != NATS_OK)
    return ag_fail(em, AG_ERR_INVALID, "JetStream stream %s: %s%s", stream, link_error(s, why, sizeof why),
                   link_js_off(s, jerr) ? " (is JetStream enabled on the server?)" : "");
  *last = si->State.LastSeq;
  jsStreamInfo_Destroy(si);
  return AG_OK;
}

int link_consumer(jsCtx *js, const char *stream, const char *deliver, uint64_t start_seq, long hb_ms, char *name,
                  size_t name_cap, ag_errmsg *em) {
  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.DeliverSubject = deliver;
  cc.DeliverPolicy = js_DeliverByStartSequence;
  cc.OptStartSeq = start_seq ? start_seq : 1;
  cc.AckPolicy = js_AckNone;
  cc.Heartbeat = (int64_t)hb_ms * 1000000;
  cc.InactiveThreshold = (int64_t)30 * 1000 * 1000 * 1000; /* gone 30 s after its process */
  jsConsumerInfo *ci = NULL;
  jsErrCode jerr = 0;
  char why[256];
  natsStatus s = js_AddConsumer(&ci, js, stream, &cc, NULL, &jerr);
  if (s != NATS_OK) return ag_fail(em, AG_ERR_IO, "consumer of %s: %s", stream, link_error(s, why, sizeof why));
  snprintf(name, name_cap, "%s", ci->Name);
  jsConsumerInfo_Destroy(ci);
  return AG_OK;
}
