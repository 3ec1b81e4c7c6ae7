// SPDX-License-Identifier: GPL-2.0-only
// cxx_bad_alloc.cc — operator new's std::bad_alloc caught: 3 new[] and 1 aligned new of 2^62 bytes, then 5 new[]/delete[].
#include <cstddef>
#include <new>
static volatile std::size_t huge = std::size_t(1) << 62;

// Exits 0 when the 4 failures were caught (a return probe on a new that throws would end the program instead).
int main()
{
	int caught = 0;

	for (int i = 0; i < 3; i++) {
		try {
			char *p = new char[huge];

			p[0] = 1;
		} catch (const std::bad_alloc &) {
			caught++;
		}
	}
	try {
		::operator delete(::operator new(huge, std::align_val_t(64)), std::align_val_t(64));
	} catch (const std::bad_alloc &) {
		caught++;
	}
	for (int i = 0; i < 5; i++) {
		char *a = new char[5005];

		a[0] = 1;
		delete[] a;
	}
	return caught == 4 ? 0 : 1;
}
