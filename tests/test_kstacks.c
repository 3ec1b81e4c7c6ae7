/* test_kstacks.c — placeholder */
int main(void) { return 0; }
