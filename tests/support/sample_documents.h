// Small graph documents for tests: valid ones to mutate into every kind of bad document.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace minifyd::test {

inline std::string hash_of_letter(char letter) { return std::string(64, letter); }

// mm of two views of one 96-byte storage (the second transposed, at an offset), plus a constant,
// a multi-output op read through getitem, and non-finite float arguments.
inline nlohmann::json sample_document() {
  return nlohmann::json::parse(R"({
    "format": "minifyd.graph",
    "version": 1,
    "storages": [
      {"hash": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "nbytes": 96, "device": "cpu"},
      {"hash": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "nbytes": 4, "device": "cpu"}
    ],
    "inputs": [
      {"storage": 0, "dtype": "float32", "shape": [2, 3], "stride": [3, 1], "storage_offset": 0, "requires_grad": false},
      {"storage": 0, "dtype": "float32", "shape": [3, 2], "stride": [1, 3], "storage_offset": 6, "requires_grad": false}
    ],
    "constants": {
      "_tensor_constant0": {"storage": 1, "dtype": "float32", "shape": [], "stride": [], "storage_offset": 0}
    },
    "nodes": [
      {"name": "arg0_1", "op": "placeholder"},
      {"name": "arg1_1", "op": "placeholder"},
      {"name": "_tensor_constant0", "op": "get_attr", "target": "_tensor_constant0"},
      {"name": "mm", "op": "call_function", "target": "aten::mm", "args": [{"node": "arg0_1"}, {"node": "arg1_1"}]},
      {"name": "add", "op": "call_function", "target": "aten::add.Tensor",
       "args": [{"node": "mm"}, {"node": "_tensor_constant0"}], "kwargs": {"alpha": 2}},
      {"name": "max_1", "op": "call_function", "target": "aten::max.dim", "args": [{"node": "add"}, 1]},
      {"name": "getitem", "op": "call_function", "target": "getitem", "args": [{"node": "max_1"}, 0]},
      {"name": "clamp", "op": "call_function", "target": "aten::clamp",
       "args": [{"node": "getitem"}, {"float": "-inf"}, 10.0]},
      {"name": "to", "op": "call_function", "target": "aten::_to_copy",
       "args": [{"node": "clamp"}],
       "kwargs": {"dtype": {"dtype": "float16"}, "device": {"device": "cpu"}, "layout": {"layout": "strided"},
                  "memory_format": {"memory_format": "contiguous_format"}}},
      {"name": "cat", "op": "call_function", "target": "aten::cat",
       "args": [[{"node": "to"}, {"node": "to"}], -1]},
      {"name": "output", "op": "output", "args": [{"tuple": [{"node": "cat"}, null, true, "s", {"float": "nan"}]}]}
    ]
  })");
}

}  // namespace minifyd::test
