#include "calibration/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "reference/fast/fast.h"

namespace attnv::calibration {

using namespace bound;  // the bound it calibrates (reference/bound/)

std::vector<CalibrationModel> standard_models(bool include_f64) {
  std::vector<CalibrationModel> out;
  std::vector<DType> storages = {DType::f32, DType::f16, DType::bf16};
  if (include_f64) storages.insert(storages.begin(), DType::f64);
  for (DType st : storages)
    for (bool tiled : {false, true})
      for (bool p_rounded : {false, true}) {
        if (p_rounded && (st == DType::f32 || st == DType::f64)) continue;  // P already in storage
        CalibrationModel m;
        m.kernel.model = PrecisionModel::natural(st, tiled ? 64 : 0);
        if (p_rounded) m.kernel.model.p_dtype = st;
        m.kernel.structure = tiled ? kernels::emulated::Structure::tiled : kernels::emulated::Structure::naive;
        m.name = std::string(dtype_name(st)) + (tiled ? " tiled64" : " naive") +
                 (p_rounded ? " P=" + std::string(dtype_name(st)) : "");
        out.push_back(m);
      }
  return out;
}

namespace {

struct Sample {
  double fwd = 0, bwd = 0;
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  return v[std::min(k, v.size() - 1)];
}

// Worst ratio over the named tensors of a comparison; also whether any failed.
struct Verdict {
  double worst = 0;
  double usage = 0;
  bool failed = false;
  std::int64_t non_finite = 0;
  bool any = false;
};
Verdict verdict(const Comparison& c, std::initializer_list<const char*> names) {
  Verdict v;
  for (const auto& t : c.tensors)
    for (const char* n : names)
      if (t.name == n && t.elements > 0) {
        v.any = true;
        v.worst = std::max(v.worst, t.worst_ratio);
        v.usage = std::max(v.usage, t.worst_bound_usage);
        v.failed = v.failed || !t.ok();
        v.non_finite += t.non_finite;
      }
  return v;
}

// Bitwise equality, NaN equal to NaN (a bug that changes nothing is not "affecting").
bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t e = 0; e < a.size(); ++e)
    if (!(a[e] == b[e] || (std::isnan(a[e]) && std::isnan(b[e])))) return false;
  return true;
}

Outputs forward_only(const Outputs& o) {
  Outputs f;
  f.out = o.out;
  f.lse = o.lse;
  return f;
}

}  // namespace

CalibrationTable calibrate(const CalibrationOptions& opt) {
  const std::vector<CalibrationModel> models = opt.models.empty() ? standard_models() : opt.models;
  const std::vector<gen::Family> families = opt.families.empty() ? gen::all_families() : opt.families;
  auto exact_of = opt.exact ? opt.exact : [](const Case& c, bool bwd) {
    return bwd ? reference::fast_backward(c) : reference::fast_forward(c);
  };
  struct BugSpec {
    const char* name;
    kernels::emulated::Bugs bugs;
    bool backward;
  };
  std::vector<BugSpec> bug_specs = {
      {"pv_accum_f16", {.pv_accum_f16 = true}, false},
      {"sloppy_exp", {.sloppy_exp = true}, false},
      {"d_model_scale", {.d_model_scale = true}, false},
      {"truncate_output", {.truncate_output = true}, false},
  };
  if (opt.backward) bug_specs.push_back({"dk_missing_scale", {.dk_missing_scale = true}, true});

  CalibrationTable table;
  table.models.resize(models.size());
  std::vector<std::vector<Sample>> samples(models.size());
  std::vector<std::vector<double>> sign_ok(models.size()), sign_trunc(models.size());
  for (std::size_t mi = 0; mi < models.size(); ++mi) {
    table.models[mi].model = models[mi];
    for (const BugSpec& b : bug_specs) table.models[mi].bugs.push_back({b.name, 0, 0});
  }
  // Cases depend only on the storage dtype: draw each once and run every model of that dtype.
  std::vector<DType> storages;
  for (const auto& m : models)
    if (std::find(storages.begin(), storages.end(), m.kernel.model.storage) == storages.end())
      storages.push_back(m.kernel.model.storage);
  const std::int64_t total = opt.cases_per_model * static_cast<std::int64_t>(storages.size());
  std::int64_t done = 0;
  for (DType st : storages) {
    for (std::int64_t n = 0; n < opt.cases_per_model; ++n) {
      const gen::Family fam = families[static_cast<std::size_t>(n) % families.size()];
      gen::FamilyOptions fo;
      fo.dtype = st;
      fo.size = opt.size;
      fo.with_dout = opt.backward;
      const Case c = gen::make_case(fam, opt.first_seed + static_cast<std::uint64_t>(n), fo);
      const Outputs exact = exact_of(c, opt.backward);
      for (std::size_t mi = 0; mi < models.size(); ++mi) {
        const kernels::emulated::Config& cfg = models[mi].kernel;
        if (cfg.model.storage != st) continue;
        ModelResult& res = table.models[mi];
        ++res.cases;
        const Bounds bnd = opt.backward ? backward_bound(c, exact, cfg.model)
                                        : forward_bound(c, exact, cfg.model);
        const Outputs got = opt.backward ? kernels::emulated::backward(c, cfg) : kernels::emulated::forward(c, cfg);
        const Comparison cmp = compare(got, exact, bnd, cfg.model.out);
        const Verdict vf = verdict(cmp, {"out", "lse"}), vb = verdict(cmp, {"dq", "dk", "dv"});
        Sample s{vf.worst, vb.worst};
        samples[mi].push_back(s);
        if (vf.worst >= res.fwd_max) { res.fwd_max = vf.worst; res.fwd_worst_case = c.id; }
        if (vb.worst >= res.bwd_max) { res.bwd_max = vb.worst; res.bwd_worst_case = c.id; }
        res.fwd_usage = std::max(res.fwd_usage, vf.usage);
        res.bwd_usage = std::max(res.bwd_usage, vb.usage);
        if (!cmp.ok()) ++res.correct_failures;
        res.correct_non_finite += vf.non_finite + vb.non_finite;
        sign_ok[mi].push_back(mean_signed_error_ulps(got.out, exact.out, cfg.model.out));
        const Bounds fwd_bnd{bnd.out, bnd.lse, {}, {}, {}, {}};
        for (std::size_t bi = 0; bi < bug_specs.size(); ++bi) {
          kernels::emulated::Config bad = cfg;
          bad.bugs = bug_specs[bi].bugs;
          BugResult& br = res.bugs[bi];
          Outputs bo;
          Verdict v;
          bool differs = false;
          if (bug_specs[bi].backward) {
            bo = kernels::emulated::backward(c, bad);
            v = verdict(compare(bo, exact, bnd, cfg.model.out), {"dk"});
            differs = !same_values(bo.dk, got.dk);
          } else {
            bo = kernels::emulated::forward(c, bad);
            v = verdict(compare(bo, forward_only(exact), fwd_bnd, cfg.model.out), {"out", "lse"});
            differs = !same_values(bo.out, got.out) || !same_values(bo.lse, got.lse);
          }
          ++br.cases;
          if (differs) ++br.affected;
          if (v.failed) ++br.caught;
          if (std::string(bug_specs[bi].name) == "truncate_output")
            sign_trunc[mi].push_back(mean_signed_error_ulps(bo.out, exact.out, cfg.model.out));
        }
      }
      ++done;
      if (opt.progress) opt.progress(done, total);
    }
  }
  for (std::size_t mi = 0; mi < models.size(); ++mi) {
    ModelResult& res = table.models[mi];
    std::vector<double> f, b;
    for (const Sample& s : samples[mi]) {
      f.push_back(s.fwd);
      b.push_back(s.bwd);
    }
    res.fwd_p99 = percentile(f, 0.99);
    res.bwd_p99 = percentile(b, 0.99);
    res.sign_correct = sign_test(sign_ok[mi]);
    res.sign_truncated = sign_test(sign_trunc[mi]);
  }
  return table;
}

std::string CalibrationTable::format() const {
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %6s %8s %8s %8s %8s %8s %8s %5s | %-30s | %s\n", "model",
                "cases", "fwd max", "fwd p99", "fwd use", "bwd max", "bwd p99", "bwd use", "fail",
                "sign test correct / trunc", "bugs: caught / affected cases (share)");
  o << line;
  for (const ModelResult& m : models) {
    std::ostringstream bugs;
    for (const BugResult& b : m.bugs)
      bugs << b.bug << " " << b.caught << "/" << b.affected << " (" << std::round(1000 * b.share()) / 10
           << "%)  ";
    char sign[96];
    std::snprintf(sign, sizeof sign, "%4.1f%% p=%.2g / %4.1f%% p=%.2g", 100 * m.sign_correct.share,
                  m.sign_correct.p_value, 100 * m.sign_truncated.share, m.sign_truncated.p_value);
    std::snprintf(line, sizeof line, "%-20s %6lld %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f %5lld | %-30s | ",
                  m.model.name.c_str(), static_cast<long long>(m.cases), m.fwd_max, m.fwd_p99,
                  m.fwd_usage, m.bwd_max, m.bwd_p99, m.bwd_usage,
                  static_cast<long long>(m.correct_failures), sign);
    o << line << bugs.str() << '\n';
  }
  return o.str();
}

}  // namespace attnv::calibration
