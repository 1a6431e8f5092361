// Encoding and decoding of minifyd's requests.
#include "protocol/daemon_requests.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "common/number_range.h"
#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

std::string known_types() {
  std::string list;
  for (const std::string& type : daemon_request_types()) list += (list.empty() ? "" : ", ") + type;
  return list;
}

template <std::size_t... index>
std::vector<std::string> request_types(std::index_sequence<index...>) {
  return {std::variant_alternative_t<index, TypedDaemonRequest>::type...};
}

constexpr auto submit_fields = [](auto& request, auto&& field) {
  field("graph_dir", request.graph_dir);
  field("spec", request.spec);
  field("priority", request.priority, std::int64_t{0});
};

// status's job is optional, watch's and cancel's required: the member's type says which.
constexpr auto job_fields = [](auto& request, auto&& field) { field("job", request.job); };
constexpr auto no_fields = [](auto&, auto&&) {};

constexpr auto result_fields = [](auto& request, auto&& field) {
  field("job", request.job);
  field("out", request.out);
};

constexpr auto query_fields = [](auto& request, auto&& field) {
  field("graph_dir", request.graph_dir);
  field("evaluation", request.evaluation);
};

// Each request's field list, by its type.
template <class Request>
constexpr auto fields_of() {
  if constexpr (std::is_same_v<Request, SubmitRequest>) return submit_fields;
  else if constexpr (std::is_same_v<Request, StatusRequest> || std::is_same_v<Request, WatchRequest> ||
                     std::is_same_v<Request, CancelJobRequest>)
    return job_fields;
  else if constexpr (std::is_same_v<Request, ResultRequest>) return result_fields;
  else if constexpr (std::is_same_v<Request, QueryRequest>) return query_fields;
  else return no_fields;
}

// The numbers of a decoded request held to their ranges (common/number_range.h); the job ids of the
// others need none: an id no job has is answered "no job N".
template <class Request>
Expected<void> check_ranges(const Request&) {
  return {};
}
Expected<void> check_ranges(const SubmitRequest& request) {
  if (auto checked = check_number(static_cast<double>(request.priority), number_ranges::priority); !checked)
    return checked.error().with_context("priority");
  return {};
}

template <class Request>
nlohmann::json encode_request(const Request& request) {
  return encode_fields(request, fields_of<Request>(), {{"type", Request::type}});
}

// Tries each alternative of the variant from `index` on until one's type is the request's.
template <std::size_t index = 0>
Expected<TypedDaemonRequest> decode_alternative(const DaemonRequest& request) {
  if constexpr (index == std::variant_size_v<TypedDaemonRequest>) {
    return make_error(ErrorKind::invalid_input, "unknown request type \"" + request.type + "\"");
  } else {
    using Request = std::variant_alternative_t<index, TypedDaemonRequest>;
    if (request.type != Request::type) return decode_alternative<index + 1>(request);
    Request typed;
    if (auto decoded = decode_fields(JsonView(request.json), typed, fields_of<Request>()); !decoded)
      return decoded.error();
    if (auto checked = check_ranges(typed); !checked) return checked.error();
    return TypedDaemonRequest(std::move(typed));
  }
}

}  // namespace

const std::vector<std::string>& daemon_request_types() {
  static const std::vector<std::string> types =
      request_types(std::make_index_sequence<std::variant_size_v<TypedDaemonRequest>>());
  return types;
}

Expected<DaemonRequest> decode_request_object(nlohmann::json object) {
  auto type = object.find("type");
  if (type == object.end())
    return make_error(ErrorKind::invalid_input, "the request has no \"type\" (one of: " + known_types() + ")");
  if (!type->is_string())
    return make_error(ErrorKind::invalid_input,
                      std::string("the request's \"type\" is ") + type->type_name() + ", not a string");
  std::string name = type->get<std::string>();
  const auto& known = daemon_request_types();
  if (std::find(known.begin(), known.end(), name) == known.end())
    return make_error(ErrorKind::invalid_input,
                      "unknown request type \"" + excerpt(name, 100) + "\" (known: " + known_types() + ")");
  return DaemonRequest{std::move(name), std::move(object)};
}

Expected<DaemonRequest> decode_daemon_request(std::string_view line) {
  auto object = parse_request_line(line);
  if (!object) return object.error();
  return decode_request_object(std::move(*object));
}


nlohmann::json encode(const SubmitRequest& request) { return encode_request(request); }
nlohmann::json encode(const StatusRequest& request) { return encode_request(request); }
nlohmann::json encode(const ListRequest& request) { return encode_request(request); }
nlohmann::json encode(const WatchRequest& request) { return encode_request(request); }
nlohmann::json encode(const ResultRequest& request) { return encode_request(request); }
nlohmann::json encode(const CancelJobRequest& request) { return encode_request(request); }
nlohmann::json encode(const QueryRequest& request) { return encode_request(request); }
nlohmann::json encode(const StatsRequest& request) { return encode_request(request); }
nlohmann::json encode(const DaemonShutdownRequest& request) { return encode_request(request); }

Expected<TypedDaemonRequest> decode_typed_request(const DaemonRequest& request) {
  return decode_alternative(request);
}

}  // namespace minifyd::protocol
