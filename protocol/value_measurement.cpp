// The measurement's encoding, from one list of its fields.
#include "protocol/value_measurement.h"

#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

constexpr auto figures_fields = [](auto& figures, auto&& field) {
  field("max_abs_error", figures.max_abs_error);
  field("rmse", figures.rmse);
};

constexpr auto measurement_fields = [](auto& m, auto&& field) {
  field("node", m.node);
  field("dtype", m.dtype);
  field("shape", m.shape);
  field("measured", m.measured);
  field("diverges", m.diverges);
  field("max_abs_error", m.max_abs_error);
  field("compiled", m.compiled);
  field("eager", m.eager);
  field("compiled_deterministic", m.compiled_deterministic);
  field("fp64_deterministic", m.fp64_deterministic);
  field("note", m.note, std::string());
};

}  // namespace

nlohmann::json encode(const ErrorFigures& figures) { return encode_fields(figures, figures_fields); }
Expected<void> decode(const JsonView& view, ErrorFigures& figures) { return decode_fields(view, figures, figures_fields); }

nlohmann::json encode(const ValueMeasurement& measurement) { return encode_fields(measurement, measurement_fields); }
Expected<void> decode(const JsonView& view, ValueMeasurement& measurement) {
  return decode_fields(view, measurement, measurement_fields);
}

}  // namespace minifyd::protocol
