// SPDX-License-Identifier: GPL-2.0-only
// kst_cxx.cpp — C++ call paths through libstdc++ (no frame pointers in Debian's) for test_kstacks: std::ostream::write
// (libstdc++'s) calls our streambuf's xsputn, which allocates with new; caller k writes 10 + k times, each write one
// new char[16 + k].
#include <ostream>
#include <streambuf>
class alloc_buf : public std::streambuf {
public:
	explicit alloc_buf(int k) : k_(k) {}

protected:
	__attribute__((noinline)) std::streamsize xsputn(const char *s, std::streamsize n) override
	{
		char *p = new char[16 + k_];
		p[0] = n ? s[0] : 0;
		__asm__ volatile("" : : "r"(p) : "memory");
		delete[] p;
		return n;
	}

private:
	int k_;
};

template <int K> __attribute__((noinline)) void writer()
{
	alloc_buf b(K);
	std::ostream os(&b);

	for (int i = 0; i < 10 + K; i++)
		os.write("memtrack", 8);
	__asm__ volatile("" ::: "memory");
}

int main()
{
	writer<0>();
	writer<1>();
	writer<2>();
	writer<3>();
	return 0;
}
