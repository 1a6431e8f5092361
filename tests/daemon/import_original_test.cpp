// Importing the original into the run's store: the blobs written there are vouched for to the
// run's workers (protocol::VouchedBlobs), by their files' identity; those already there are not.
#include <catch2/catch.hpp>

#include "common/content_store.h"
#include "daemon/run/minification.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace minifyd::run;

TEST_CASE("import_original vouches for the blobs it writes, not for those the store held", "[daemon]") {
  test::TempDir dir;
  ContentStore source = *ContentStore::open(dir / "source", true);
  ContentStore target = *ContentStore::open(dir / "target", true);
  std::string weights(100000, 'w'), bias(8, 'b');
  std::string weights_hash = *source.put(weights.data(), weights.size());
  std::string bias_hash = *source.put(bias.data(), bias.size());
  REQUIRE(target.put(bias.data(), bias.size()).value() == bias_hash);

  GraphDocument original;
  original.storages = {{weights_hash, weights.size(), "cpu", std::nullopt}, {bias_hash, bias.size(), "cpu", std::nullopt}};
  original.inputs = {TensorMeta{0, DType::uint8, {100000}, {1}, 0, false}, TensorMeta{1, DType::uint8, {8}, {1}, 0, false}};
  RunPlace place{std::move(target), "run", nullptr, nullptr, ""};
  REQUIRE(import_original(original, source, place).has_value());

  REQUIRE(place.vouched->size() == 1);
  CHECK(place.vouched->at(weights_hash) == place.store.identity(weights_hash).value());
  CHECK(place.store.get(weights_hash, weights.size()).value() == weights);
  CHECK(place.store.read_root(place.original_root()).value() == std::vector<std::string>{weights_hash, bias_hash});
  CHECK(protocol::vouched_for(*place.vouched, original).size() == 1);
}
