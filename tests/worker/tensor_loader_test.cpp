// Loading tensors from the store: values, views of one storage kept as views, corruption refused.
#include "common/content_store.h"
#include "tests/support/temp_dir.h"
#include "worker/blob_bytes.h"
#include "worker/loaded_graph.h"
#include "worker/tensor_loader.h"

#include "tests/support/catch_torch.h"

using namespace minifyd;

namespace {

struct Fixture {
  test::TempDir dir;
  ContentStore store = *ContentStore::open(dir / "store", true);
  GraphDocument document;

  // One storage of 12 floats 0..11 and one of 3 int64s.
  Fixture() {
    std::vector<float> floats(12);
    for (int i = 0; i < 12; ++i) floats[i] = static_cast<float>(i);
    std::vector<std::int64_t> longs{7, -8, 9};
    auto float_hash = store.put(floats.data(), floats.size() * sizeof(float));
    auto long_hash = store.put(longs.data(), longs.size() * sizeof(std::int64_t));
    REQUIRE(float_hash.has_value());
    REQUIRE(long_hash.has_value());
    document.storages = {{*float_hash, 48, "cpu", std::nullopt}, {*long_hash, 24, "cpu", std::nullopt}};
    document.inputs = {
        TensorMeta{0, DType::float32, {2, 3}, {3, 1}, 0, false},
        TensorMeta{0, DType::float32, {3, 2}, {1, 3}, 6, true},  // transposed view at an offset
        TensorMeta{1, DType::int64, {3}, {1}, 0, false},
        SymIntInput{8},
    };
  }
};

}  // namespace

TEST_CASE("inputs load with their values, shapes and strides", "[tensor_loader]") {
  Fixture fixture;
  worker::TensorLoader loader(fixture.document, fixture.store, std::nullopt);
  auto inputs = loader.load_inputs();
  REQUIRE(inputs.has_value());
  at::Tensor a = (*inputs)[0].toTensor();
  at::Tensor b = (*inputs)[1].toTensor();
  CHECK(a.sizes() == at::IntArrayRef{2, 3});
  CHECK(b.strides() == at::IntArrayRef{1, 3});
  CHECK(b.storage_offset() == 6);
  CHECK(a[1][2].item<float>() == 5.0f);
  CHECK(b[2][1].item<float>() == 11.0f);  // offset 6 + 2*1 + 1*3
  CHECK(b.requires_grad());
  CHECK((*inputs)[2].toTensor().scalar_type() == at::kLong);
  CHECK((*inputs)[2].toTensor()[1].item<std::int64_t>() == -8);
}

TEST_CASE("a SymInt input loads as its int", "[tensor_loader]") {
  Fixture fixture;
  worker::TensorLoader loader(fixture.document, fixture.store, std::nullopt);
  auto inputs = loader.load_inputs();
  REQUIRE(inputs.has_value());
  REQUIRE((*inputs)[3].isInt());
  CHECK((*inputs)[3].toInt() == 8);
}

TEST_CASE("tensors of one storage are views of one storage", "[tensor_loader]") {
  Fixture fixture;
  worker::TensorLoader loader(fixture.document, fixture.store, std::nullopt);
  auto inputs = loader.load_inputs();
  REQUIRE(inputs.has_value());
  at::Tensor a = (*inputs)[0].toTensor();
  at::Tensor b = (*inputs)[1].toTensor().detach();
  auto whole = loader.load({0, DType::float32, {12}, {1}, 0, false});
  REQUIRE(whole.has_value());
  CHECK(a.storage().data() == b.storage().data());
  CHECK(whole->storage().data() == a.storage().data());
  b.fill_(-1.0f);  // writes elements 6..11 of the shared storage
  CHECK((*whole)[5].item<float>() == 5.0f);
  CHECK((*whole)[6].item<float>() == -1.0f);
  CHECK((*whole)[11].item<float>() == -1.0f);
  CHECK(a[1][2].item<float>() == 5.0f);
}

TEST_CASE("a cuda storage on a worker without a GPU is an error naming the storage", "[tensor_loader]") {
  Fixture fixture;
  fixture.document.storages[0].device = "cuda:1";
  worker::TensorLoader loader(fixture.document, fixture.store, std::nullopt);
  auto inputs = loader.load_inputs();
  REQUIRE_FALSE(inputs.has_value());
  CHECK(inputs.error().message == "inputs[0]: storage 0 is on cuda:1 but this worker sees no GPU");
}

TEST_CASE("a corrupted blob is an error naming the input and the hash", "[tensor_loader]") {
  Fixture fixture;
  std::string hash = fixture.document.storages[1].hash;
  std::filesystem::path blob = fixture.store.blob_path(hash);
  std::filesystem::permissions(blob, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  std::FILE* file = std::fopen(blob.c_str(), "r+b");
  REQUIRE(file != nullptr);
  std::fputc(0x55, file);
  std::fclose(file);

  worker::TensorLoader loader(fixture.document, fixture.store, std::nullopt);
  auto inputs = loader.load_inputs();
  REQUIRE_FALSE(inputs.has_value());
  CHECK(inputs.error().kind == ErrorKind::corrupt);
  CHECK(inputs.error().message.find("inputs[2]: storage 1: blob " + hash + ": corrupted") == 0);
}

// The cache hands out its own bytes: a load copies nothing, so a run must get copies (fresh_arguments),
// and two storages of the same bytes must not come back as one storage.
TEST_CASE("with a blob cache, loads share its bytes, storages of the same bytes stay two, runs write copies",
          "[tensor_loader]") {
  Fixture fixture;
  GraphDocument& document = fixture.document;
  document.storages.push_back(document.storages[1]);  // a second storage of the long blob's bytes
  document.inputs = {TensorMeta{1, DType::int64, {3}, {1}, 0, false}, TensorMeta{2, DType::int64, {3}, {1}, 0, false}};
  worker::BlobCache cache(1 << 20);
  auto load = [&] {
    worker::TensorLoader loader(document, fixture.store, std::nullopt, &cache);
    auto inputs = loader.load_inputs();
    REQUIRE(inputs.has_value());
    return worker::LoadedGraph{{}, std::move(*inputs), {}};  // fresh_arguments() reads no document
  };
  worker::LoadedGraph first = load();
  at::Tensor a = first.inputs[0].toTensor();
  at::Tensor b = first.inputs[1].toTensor();
  CHECK(a.storage().data() != b.storage().data());
  CHECK(at::equal(a, b));

  worker::RunArguments run = worker::fresh_arguments(first);
  run.inputs[0].toTensor().fill_(0);
  CHECK(run.inputs[1].toTensor()[0].item<std::int64_t>() == 7);  // the copies do not alias either
  worker::LoadedGraph second = load();
  CHECK(second.inputs[0].toTensor().storage().data() == a.storage().data());  // the cache's bytes, not a copy
  CHECK(at::equal(second.inputs[0].toTensor(), at::tensor({7, -8, 9}, at::TensorOptions(at::kLong))));
  CHECK(cache.cached_bytes() == 24);
}

// Blobs of min_mapped_blob_bytes or more are mapped, not read: a run's copies are mappings of their
// own, which its writes do not reach beyond; a resize (as aten::resize_ on an input) works as on a
// tensor of PyTorch's own; a blob whose file is gone since is copied from the mapping instead.
TEST_CASE("large blobs load mapped; a run's copies of them are mappings of their own", "[tensor_loader]") {
  Fixture fixture;
  std::vector<float> weights(worker::min_mapped_blob_bytes / sizeof(float) + 7);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i);
  std::uint64_t nbytes = weights.size() * sizeof(float);
  auto hash = fixture.store.put(weights.data(), nbytes);
  REQUIRE(hash.has_value());
  GraphDocument& document = fixture.document;
  document.storages = {{*hash, nbytes, "cpu", std::nullopt}, {*hash, nbytes, "cpu", std::nullopt}};
  auto length = static_cast<std::int64_t>(weights.size());
  document.inputs = {TensorMeta{0, DType::float32, {length}, {1}, 0, false},
                     TensorMeta{1, DType::float32, {length - 1}, {1}, 1, false}};
  worker::BlobCache cache(1 << 24);
  worker::TensorLoader loader(document, fixture.store, std::nullopt, &cache);
  auto inputs = loader.load_inputs();
  REQUIRE(inputs.has_value());
  worker::LoadedGraph loaded{{}, std::move(*inputs), {}};
  at::Tensor first = loaded.inputs[0].toTensor();
  at::Tensor second = loaded.inputs[1].toTensor();
  CHECK(first.storage().data() != second.storage().data());  // two storages of one blob, as exported
  CHECK(second[0].item<float>() == 1.0f);

  worker::RunArguments run = worker::fresh_arguments(loaded);
  at::Tensor written = run.inputs[0].toTensor();
  written.fill_(-1);
  CHECK(first[5].item<float>() == 5.0f);
  CHECK(run.inputs[1].toTensor()[0].item<float>() == 1.0f);
  CHECK(worker::fresh_arguments(loaded).inputs[0].toTensor()[5].item<float>() == 5.0f);
  CHECK(fixture.store.get(*hash, nbytes)->size() == nbytes);
  CHECK(worker::fresh_arguments(loaded).inputs[0].toTensor().storage().data() != first.storage().data());

  at::Tensor resized = worker::fresh_arguments(loaded).inputs[0].toTensor();
  resized.resize_({length * 2});
  CHECK(resized[length - 1].item<float>() == static_cast<float>(length - 1));

  std::filesystem::remove(fixture.store.blob_path(*hash));
  at::Tensor copied = worker::fresh_arguments(loaded).inputs[0].toTensor();
  CHECK(copied[length - 1].item<float>() == static_cast<float>(length - 1));
}

// The values graph_format.py's fill_storage draws for the same fills (tests/roundtrip/test_store_py.py
// checks these numbers there), so a worker of either language runs what repro.py runs.
TEST_CASE("filled storages load as their fill draws them, views kept", "[tensor_loader]") {
  Fixture fixture;
  GraphDocument& document = fixture.document;
  document.storages = {{"", 16, "cpu", StorageFill{FillKind::random, DType::float32, 0, -1.0, 2.0}},
                       {"", 32, "cpu", StorageFill{FillKind::random, DType::int64, 3, -2.0, 5.0}},
                       {"", 8, "cpu", StorageFill{FillKind::ones, DType::bfloat16}},
                       {"", 24, "cpu", StorageFill{FillKind::zeros, DType::float32}}};
  document.inputs = {TensorMeta{0, DType::float32, {4}, {1}, 0, false}, TensorMeta{1, DType::int64, {4}, {1}, 0, false},
                     TensorMeta{2, DType::bfloat16, {4}, {1}, 0, false},
                     TensorMeta{3, DType::float32, {3, 2}, {1, 3}, 0, true}};
  worker::TensorLoader loader(document, fixture.store, std::nullopt);
  auto inputs = loader.load_inputs();
  REQUIRE(inputs.has_value());
  at::Tensor expected_floats = at::tensor({1.9101589918136597, 1.1234595775604248, 0.3781488239765167, 1.7622430324554443},
                                          at::TensorOptions(at::kDouble))
                                   .to(at::kFloat);
  CHECK(at::equal((*inputs)[0].toTensor(), expected_floats));
  CHECK(at::equal((*inputs)[1].toTensor(), at::tensor({0, -2, -1, 1}, at::TensorOptions(at::kLong))));
  CHECK(at::equal((*inputs)[2].toTensor(), at::ones({4}, at::TensorOptions(at::kBFloat16))));
  at::Tensor zeros = (*inputs)[3].toTensor();
  CHECK(zeros.strides() == at::IntArrayRef{1, 3});
  CHECK(zeros.abs().sum().item<float>() == 0.0f);
  CHECK(zeros.requires_grad());
}
