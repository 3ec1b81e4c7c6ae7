// SPDX-License-Identifier: GPL-2.0-only
// cxx_fail.cc — operator new(nothrow) returning NULL: each a failed call of its own (see test_record.c).
#include <cstddef>
#include <new>
static volatile std::size_t huge = std::size_t(1) << 62;

// 3 new(nothrow), 2 new[](nothrow), 1 aligned new(nothrow); exits with the calls that did not fail.
int main()
{
	int ok = 0;

	for (int i = 0; i < 3; i++)
		ok += ::operator new(huge, std::nothrow) != nullptr;
	for (int i = 0; i < 2; i++)
		ok += ::operator new[](huge, std::nothrow) != nullptr;
	ok += ::operator new(huge, std::align_val_t(64), std::nothrow) != nullptr;
	return ok;
}
