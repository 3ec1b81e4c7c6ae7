// churn_new.cc — benchmark workload: N operator new / sized operator delete pairs of random sizes, as churn.c does.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#define POOL 1024

// Called through volatile pointers so that no new/delete pair is elided or merged.
void *(*volatile v_new)(std::size_t) = &::operator new;
void (*volatile v_delete)(void *, std::size_t) noexcept = &::operator delete;

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 2000000;
	std::uint64_t x = 88172645463325252ull;
	void *pool[POOL] = {};
	std::size_t size[POOL] = {};

	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		std::size_t k = x % POOL;
		if (pool[k])
			v_delete(pool[k], size[k]);
		size[k] = 16 + (x >> 32) % 4096;
		pool[k] = v_new(size[k]);
	}
	for (int i = 0; i < POOL; i++)
		if (pool[i])
			v_delete(pool[i], size[i]);
	return 0;
}
