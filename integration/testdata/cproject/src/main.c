#include <stdio.h>

#include "config.h"
#include "cp.h"
#include "version.h"

int main(void) {
	const char *g = cp_greeting();
	printf("%s v%s answer=%d len=%d\n", g, CP_VERSION, cp_answer(), cp_strlen(g));
	return 0;
}
