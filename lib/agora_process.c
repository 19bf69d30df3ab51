/* libagora's name for the process (API version 9): what the lock file of a chat this process holds says
 * after its pid, so that another process refused the chat can say who holds it. */
#include "lib/agora_int.h"

#include "storage/store_lock.h"

void agora_process_name(const char *name) { store_lock_set_owner(name); }
