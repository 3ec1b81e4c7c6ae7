/* priv_stack.c — reads a file onto its stack, then allocates from two call sites (see test_privstacks.c). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* Through volatile pointers so that the compiler cannot pair and drop malloc/free. */
void *(*volatile v_malloc)(size_t) = malloc;
void (*volatile v_free)(void *) = free;

/* Call site one: three blocks of 1000 bytes, freed. */
static void site_one(void)
{
	void *p[3];
	int i;

	for (i = 0; i < 3; i++)
		p[i] = v_malloc(1000);
	for (i = 0; i < 3; i++)
		v_free(p[i]);
}

/* Call site two: two blocks of 2000 bytes, freed. */
static void site_two(void)
{
	void *p[2];
	int i;

	for (i = 0; i < 2; i++)
		p[i] = v_malloc(2000);
	for (i = 0; i < 2; i++)
		v_free(p[i]);
}

/* argv[1]: the file whose bytes stay on the stack (in main's frame, above both sites') while they allocate. */
int main(int argc, char **argv)
{
	volatile char bytes[128];
	ssize_t n;
	int fd;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0)
		return 2;
	n = read(fd, (char *)bytes, sizeof(bytes));
	close(fd);
	if (n <= 0)
		return 3;
	site_one();
	site_two();
	return bytes[0] == 0;
}
