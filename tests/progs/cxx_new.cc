// cxx_new.cc — C++ new/new[]/delete/delete[], each counted once (not again as the malloc/free inside).
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
	return 0;
}
