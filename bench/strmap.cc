// SPDX-License-Identifier: GPL-2.0-only
// strmap.cc — benchmark program: N strings into a std::map and a std::unordered_map, looked up, then erased.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
// Keys longer than the small-string buffer (15 bytes), so that each one is a heap block too: a node and its key's
// characters, a real C++ program's pattern. A fixed xorshift seed makes every run allocate the same.
static std::string key(unsigned long long &x)
{
	char buf[48];

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	std::snprintf(buf, sizeof(buf), "key-%016llx-%llu", x, x % 1000);
	return buf;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 1000000;
	std::map<std::string, long> ordered;
	std::unordered_map<std::string, long> hashed;
	unsigned long long x = 88172645463325252ull;
	long found = 0;

	for (long i = 0; i < n; i++) {
		std::string k = key(x);

		ordered.emplace(k, i);
		hashed.emplace(std::move(k), i);
	}
	x = 88172645463325252ull;
	for (long i = 0; i < n; i += 2) {
		std::string k = key(x);

		found += ordered.count(k) + hashed.count(k);
		key(x);
	}
	for (auto it = ordered.begin(); it != ordered.end();)
		it = ordered.erase(it);
	hashed.clear();
	std::printf("%ld\n", found);
	return found == n ? EXIT_SUCCESS : EXIT_FAILURE;
}
