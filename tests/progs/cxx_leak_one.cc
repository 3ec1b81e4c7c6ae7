// SPDX-License-Identifier: GPL-2.0-only
// cxx_leak_one.cc — a C++ program (libstdc++ and its 72,704-byte emergency pool) that leaks one known block:
// new char[4242]. A std::string made and destroyed pulls libstdc++ in; nothing else is left.
#include <string>
char *volatile leaked;

int main()
{
	std::string *s = new std::string(40, 'x');	// longer than the small-string buffer: a heap block

	delete s;
	leaked = new char[4242];
	return 0;
}
