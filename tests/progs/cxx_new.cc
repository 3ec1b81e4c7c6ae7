// SPDX-License-Identifier: GPL-2.0-only
// cxx_new.cc — C++ new/new[]/delete/delete[] and their variants, each counted once (not again as the malloc/free inside).
#include <cstddef>
#include <new>
struct Obj {
	char bytes[7073];
};

int main()
{
	Obj *objs[10];
	char *arrays[10];

	for (int i = 0; i < 10; i++) {
		objs[i] = new Obj;
		arrays[i] = new char[7072];
	}
	for (int i = 0; i < 10; i++) {
		delete objs[i];
		delete[] arrays[i];
	}
	void *p = ::operator new(7074, std::nothrow);
	::operator delete(p);
	// The decorated deletes call the ones with a decoration fewer, down to free: each release counts once.
	for (int i = 0; i < 3; i++) {
		void *a = ::operator new[](7075);
		::operator delete[](a, 7075);
		void *b = ::operator new(7076, std::align_val_t(64));
		::operator delete(b, std::align_val_t(64));
		void *c = ::operator new(7077, std::align_val_t(64));
		::operator delete(c, 7077, std::align_val_t(64));
		void *d = ::operator new[](7078, std::nothrow);
		::operator delete[](d, std::nothrow);
	}
	return 0;
}
