// SPDX-License-Identifier: GPL-2.0-only
// cxx_store.cc — a std::map<std::string, std::vector<int>> filled through an inline member function (for --stacks).
// cxx_store N: N keys "k<i>" (short: no heap string), one int each, so per key one map node and one 4-byte vector
// buffer; every block stays live to the end (the map is leaked on purpose, so leaked bytes scale with N too).
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
namespace app {

class Store {
public:
	inline void add(const std::string &key, int value)
	{
		data_[key].push_back(value);
	}
	std::size_t size() const
	{
		return data_.size();
	}

private:
	std::map<std::string, std::vector<int>> data_;
};

} // namespace app

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 100;
	app::Store *store = new app::Store;	// leaked: its blocks stay live at exit

	for (int i = 0; i < n; i++)
		store->add("k" + std::to_string(i), i);
	return store->size() == (std::size_t)n ? 0 : 1;
}
