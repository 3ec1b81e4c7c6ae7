// SPDX-License-Identifier: GPL-2.0-only
// churn_new.cc — benchmark workload: N operator new / sized operator delete pairs of random sizes, as churn.c does.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/resource.h>
#define POOL 1024

// Called through volatile pointers so that no new/delete pair is elided or merged.
void *(*volatile v_new)(std::size_t) = &::operator new;
void (*volatile v_delete)(void *, std::size_t) noexcept = &::operator delete;
void *(*volatile v_new_array)(std::size_t) = &::operator new[];
void (*volatile v_delete_array)(void *) noexcept = &::operator delete[];
void (*volatile v_delete_plain)(void *) noexcept = &::operator delete;

enum kind { SIZED, PLAIN, ARRAY };

static void release(enum kind k, void *p, std::size_t size)
{
	if (k == SIZED)
		v_delete(p, size);
	else if (k == PLAIN)
		v_delete_plain(p);
	else
		v_delete_array(p);
}

// churn_new N [--cpu] [--plain | --array]: new and sized delete (the default), new and unsized delete, or new[] and
// delete[]; --cpu prints its own CPU time at the end, for bench/cxx.sh (a wrapper like perf stat would be traced).
int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 2000000;
	std::uint64_t x = 88172645463325252ull;
	void *pool[POOL] = {};
	std::size_t size[POOL] = {};
	enum kind k = SIZED;
	bool cpu = false;

	for (int i = 2; i < argc; i++) {
		cpu |= !std::strcmp(argv[i], "--cpu");
		k = !std::strcmp(argv[i], "--plain") ? PLAIN : !std::strcmp(argv[i], "--array") ? ARRAY : k;
	}
	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		std::size_t j = x % POOL;
		if (pool[j])
			release(k, pool[j], size[j]);
		size[j] = 16 + (x >> 32) % 4096;
		pool[j] = k == ARRAY ? v_new_array(size[j]) : v_new(size[j]);
	}
	for (int i = 0; i < POOL; i++)
		if (pool[i])
			release(k, pool[i], size[i]);
	if (cpu) {
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		std::printf("cpu_ms %.3f\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
						     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	}
	return 0;
}
