/* Publishing to a world's stream as a peer, for tests (see nats_peer.h). */
#include "support/nats_peer.h"

#include <nats/nats.h>
#include <string.h>

int nats_peer_publish(const nats_peer_msg *m) {
  natsOptions *o = NULL;
  natsConnection *nc = NULL;
  jsCtx *js = NULL;
  natsMsg *msg = NULL;
  jsPubAck *pa = NULL;
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MsgId = m->id;
  po.MaxWait = 2000;
  natsStatus s = natsOptions_Create(&o);
  if (s == NATS_OK) s = natsOptions_SetURL(o, m->url);
  if (s == NATS_OK && m->user) s = natsOptions_SetUserInfo(o, m->user, m->pw);
  if (s == NATS_OK) s = natsConnection_Connect(&nc, o);
  if (s == NATS_OK) s = natsConnection_JetStream(&js, nc, NULL);
  if (s == NATS_OK) s = natsMsg_Create(&msg, m->subject, NULL, m->data, (int)strlen(m->data));
  if (s == NATS_OK && m->sig) s = natsMsgHeader_Set(msg, "Agora-Sig", m->sig);
  if (s == NATS_OK) s = js_PublishMsg(&pa, js, msg, &po, NULL);
  jsPubAck_Destroy(pa);
  natsMsg_Destroy(msg);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  natsOptions_Destroy(o);
  return s == NATS_OK ? 0 : -1;
}
