#include "config.h"
#include "cp.h"

const char *cp_greeting(void) { return GREETING; }
