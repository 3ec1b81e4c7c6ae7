// SPDX-License-Identifier: GPL-2.0-only
// cxx_pairs.cc — 1,000 new[]/delete[] and 500 new/delete of known sizes: each block allocated once, released once.
// `cxx_pairs exec`: 10 new/delete of 3003 bytes, then the same program is exec'd, without the argument.
#include <cstring>
#include <unistd.h>
struct Obj {
	char bytes[3002];
};

struct Other {
	char bytes[3003];
};

int main(int argc, char **argv)
{
	if (argc > 1 && !std::strcmp(argv[1], "exec")) {
		for (int i = 0; i < 10; i++)
			delete new Other;
		execl("/proc/self/exe", argv[0], (char *)nullptr);
		return 127;
	}
	for (int i = 0; i < 1000; i++) {
		char *a = new char[3001];

		a[0] = 1;
		delete[] a;		// operator delete[](void *)
	}
	for (int i = 0; i < 500; i++) {
		Obj *o = new Obj;

		o->bytes[0] = 1;
		delete o;		// sized: operator delete(void *, 3002)
	}
	return 0;
}
