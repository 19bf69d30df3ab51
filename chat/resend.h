/* Editing a chat's past (issue 13 §3, issue 24): a human message edited and sent again, the last turn
 * retried, a message and those after it deleted. The console's /edit and /retry and the API's
 * PUT/DELETE …/messages/{seq} and POST …/retry are this code: the current chat is cut after the message
 * before (chat_session_truncate: one transaction), then the text is published again as the human, so
 * the agents answer it afresh. */
#ifndef AG_CHAT_RESEND_H
#define AG_CHAT_RESEND_H

#include <stdint.h>

#include "chat/session.h"

/* Message seq of the current chat (0: the last human one) is replaced by text and sent again; *kept
 * (may be NULL) gets the last message kept. AG_ERR_STATE when there is no current chat or replies are
 * in flight, AG_ERR_NOT_FOUND when the chat has no such message, AG_ERR_INVALID when it is not a
 * human message; em says which. */
int chat_resend_edit(chat_session *cs, uint64_t seq, const char *text, uint64_t *kept, ag_errmsg *em);
/* The last human message of the current chat is sent again (what came after it goes); errors as
 * chat_resend_edit. */
int chat_resend_retry(chat_session *cs, uint64_t *kept, ag_errmsg *em);
/* Message seq of the current chat and every one after it go (nothing is sent); errors as
 * chat_resend_edit, any sender's message may go. */
int chat_resend_cut(chat_session *cs, uint64_t seq, ag_errmsg *em);

#endif
