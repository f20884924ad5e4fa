#include "tests/support/catch_runner.h"

int main(int argc, char** argv) {
  return Catch::Session().run(argc, argv);
}
