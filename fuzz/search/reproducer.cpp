#include "fuzz/search/reproducer.h"

#include <nlohmann/json.hpp>

#include "io/npy.h"
#include "problem/error.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::fuzz {

namespace {

// The one case of a fuzz folder: its inputs as `id`, meta.attnv_fuzz = `fields` plus the layout,
// the kernel and its configuration; finding.txt. Returns the case's own folder.
std::filesystem::path write_fuzz_case(const std::filesystem::path& dir, const Case& c, const std::string& id,
                                      nlohmann::json fields, Layout layout, const std::string& kernel_spec,
                                      const std::string& kernel_configuration, const std::string& report_text) {
  io::ExchangeCase ec;
  ec.c = c;
  ec.c.id = id;
  ec.dir = "case";
  fields["layout"] = layout_name(layout);
  fields["kernel"] = kernel_spec;
  fields["kernel_configuration"] = kernel_configuration;
  nlohmann::json meta;
  meta["attnv_fuzz"] = std::move(fields);
  ec.meta_json = meta.dump();
  io::write_exchange(dir, std::vector<io::ExchangeCase>{ec});
  io::write_text_atomic(dir / "finding.txt", report_text);
  return io::case_dir(dir, ec);
}

}  // namespace

void write_reproducer(const std::filesystem::path& dir, const fuzz::Finding& f, bool recurred,
                      const std::string& kernel_spec, const std::string& kernel_configuration,
                      const PrecisionModel& model, const std::string& report_text) {
  nlohmann::json fields = {{"finding", fail_kind_id(f.kind)}, {"worst", f.worst}, {"recurred", recurred}};
  if (f.decode)
    fields["decode"] = {{"steps", f.decode->steps}, {"page_size", f.decode->page_size}, {"prefix", f.decode->prefix},
                        {"seed", f.decode->seed}, {"label", f.decode->label}};
  const std::filesystem::path folder = write_fuzz_case(dir, f.c, "fuzz_" + std::string(fail_kind_id(f.kind)), fields,
                                                       f.layout, kernel_spec, kernel_configuration, report_text);
  if (f.decode) return;  // the prompt alone: each call has its own shapes
  const DType t = f.c.problem.dtype;
  if (!f.got.out.empty()) io::write_outputs(folder, "", f.c, f.got, t);
  // The reference and the bound the kernel was judged by, in f64 (the reference's values are
  // correctly rounded doubles). A case the reference declines has neither.
  try {
    const Outputs exact = f.backward ? reference::fast_backward(f.c) : reference::fast_forward(f.c);
    const bound::Bounds b = f.backward ? bound::backward_bound(f.c, exact, model) : bound::forward_bound(f.c, exact, model);
    io::write_outputs(folder, "ref_", f.c, exact, DType::f64);
    io::write_outputs(folder, "bound_", f.c, Outputs{b.out, b.lse, b.dq, b.dk, b.dv, b.dsinks}, DType::f64);
  } catch (const InputError&) {
  }
}

void write_attnv_error_case(const std::filesystem::path& dir, const Case& c, Layout layout, bool recurred,
                            const std::string& kernel_spec, const std::string& kernel_configuration,
                            const std::string& error, const std::string& report_text) {
  write_fuzz_case(dir, c, "fuzz_attnv_error", {{"attnv_error", error}, {"recurred", recurred}}, layout, kernel_spec,
                  kernel_configuration, report_text);
}

namespace {

// meta.attnv_fuzz[key] of a case, null when the case has none.
nlohmann::json fuzz_meta(const io::ExchangeCase& c, const char* key) {
  if (c.meta_json.empty()) return nullptr;
  const nlohmann::json meta = nlohmann::json::parse(c.meta_json, nullptr, /*allow_exceptions=*/false);
  if (!meta.is_object() || !meta.contains("attnv_fuzz") || !meta["attnv_fuzz"].is_object() ||
      !meta["attnv_fuzz"].contains(key))
    return nullptr;
  return meta["attnv_fuzz"][key];
}

}  // namespace

std::optional<std::string> reproducer_field(const io::ExchangeCase& c, const char* key) {
  const nlohmann::json v = fuzz_meta(c, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_string())
    throw InputError("case '" + c.c.id + "': meta.attnv_fuzz." + key + " " + v.dump() + " is not a string");
  return v.get<std::string>();
}

std::optional<bool> reproducer_recurred(const io::ExchangeCase& c) {
  const nlohmann::json v = fuzz_meta(c, "recurred");
  if (v.is_null()) return std::nullopt;
  if (!v.is_boolean())
    throw InputError("case '" + c.c.id + "': meta.attnv_fuzz.recurred " + v.dump() + " is not true or false");
  return v.get<bool>();
}

std::optional<judge::DecodePlan> reproducer_decode_plan(const io::ExchangeCase& c) {
  const nlohmann::json d = fuzz_meta(c, "decode");
  if (d.is_null()) return std::nullopt;
  const std::string where = "case '" + c.c.id + "': meta.attnv_fuzz.decode";
  const auto integer = [&](const nlohmann::json& x, const char* name) {
    if (!x.is_number_integer()) throw InputError(where + "." + name + " " + x.dump() + " is not an integer");
    return x.get<std::int64_t>();
  };
  if (!d.is_object() || !d.contains("steps") || !d["steps"].is_array())
    throw InputError(where + " " + d.dump() + " is not an object with a list 'steps'");
  judge::DecodePlan plan;
  for (const nlohmann::json& n : d["steps"]) plan.steps.push_back(integer(n, "steps[]"));
  if (d.contains("page_size")) plan.page_size = integer(d["page_size"], "page_size");
  if (d.contains("prefix")) plan.prefix = integer(d["prefix"], "prefix");
  if (d.contains("seed")) {
    if (!d["seed"].is_number_unsigned()) throw InputError(where + ".seed " + d["seed"].dump() + " is not an unsigned integer");
    plan.seed = d["seed"].get<std::uint64_t>();
  }
  if (d.contains("label") && d["label"].is_string()) plan.label = d["label"].get<std::string>();
  if (const std::string e = judge::check_plan(plan, c.c.problem.shape.Tk); !e.empty())
    throw InputError(where + ": " + e + " (the prompt has " + std::to_string(c.c.problem.shape.Tk) + " tokens)");
  return plan;
}

Layout reproducer_layout(const io::ExchangeCase& c) {
  const nlohmann::json l = fuzz_meta(c, "layout");
  if (l.is_null()) return Layout::bhtd;
  if (l.is_string())
    if (const std::optional<Layout> x = parse_layout(l.get<std::string>())) return *x;
  throw InputError("case '" + c.c.id + "': meta.attnv_fuzz.layout " + l.dump() + " is not a layout (bhtd, bthd, gapped)");
}

}  // namespace attnv::fuzz
