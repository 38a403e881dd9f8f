#ifndef CP_H
#define CP_H
int cp_add(int a, int b);
int cp_answer(void);
const char *cp_greeting(void);
int cp_strlen(const char *s);
#endif
