// A main() for a fuzz target built without libFuzzer (g++, or a machine
// without clang): runs every input named on the command line, or every
// file of a named folder, through LLVMFuzzerTestOneInput once. The suite
// uses it to replay fuzz/corpus/<target> when clang is missing
// (docs/fuzzing.md).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path p{argv[i]};
    if (std::filesystem::is_directory(p)) {
      for (auto& e : std::filesystem::directory_iterator{p})
        if (e.is_regular_file())
          inputs.push_back(e.path());
    } else if (std::filesystem::is_regular_file(p)) {
      inputs.push_back(p);
    } else {
      std::fprintf(stderr, "replay: no such input: %s\n", argv[i]);
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  for (auto& p : inputs) {
    std::ifstream in{p, std::ios::binary};
    std::string bytes{std::istreambuf_iterator<char>{in}, {}};
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                           bytes.size());
  }
  std::printf("replay: %zu inputs, no failure\n", inputs.size());
  return 0;
}
