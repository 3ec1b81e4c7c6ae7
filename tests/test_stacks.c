/* test_stacks.c — placeholder */
int main(void) { return 0; }
