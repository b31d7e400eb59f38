// A user's kernel: plain softmax attention in double on f64 storage, strided views, LSE, no
// options (so the masking requirements are "not claimed"). The last line runs the attnv
// conformance suite on it.
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include <attnv/problem/buffers.h>
#include <attnv/problem/kernel.h>
#include <attnv/properties/conformance/conformance_gtest.h>

namespace {

class PlainAttention : public attnv::Kernel {
 public:
  std::string name() const override { return "consumer_plain_attention"; }
  attnv::Capabilities capabilities() const override {
    attnv::Capabilities c;
    c.dtypes = {attnv::DType::f64};
    c.lse = true;
    c.strided = true;
    c.custom_scale = true;
    return c;
  }
  attnv::PrecisionModel precision(attnv::DType storage) const override { return attnv::PrecisionModel::natural(storage); }
  void forward(const attnv::Problem& p, const attnv::KernelViews& v) override {
    const auto& s = p.shape;
    const double scale = p.effective_scale();
    std::vector<double> t(static_cast<std::size_t>(s.Tk));
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t h = 0; h < s.Hq; ++h)
        for (std::int64_t i = 0; i < s.Tq; ++i) {
          const std::int64_t hk = h / (s.Hq / s.Hkv);
          double m = -std::numeric_limits<double>::infinity();
          for (std::int64_t j = 0; j < s.Tk; ++j) {
            double dot = 0;
            for (std::int64_t d = 0; d < s.Dk; ++d) dot += attnv::load(v.q, {b, h, i, d}) * attnv::load(v.k, {b, hk, j, d});
            t[static_cast<std::size_t>(j)] = dot * scale;
            m = std::max(m, t[static_cast<std::size_t>(j)]);
          }
          double l = 0;
          for (double& x : t) l += (x = std::exp(x - m));
          for (std::int64_t d = 0; d < s.Dv; ++d) {
            double o = 0;
            for (std::int64_t j = 0; j < s.Tk; ++j) o += t[static_cast<std::size_t>(j)] / l * attnv::load(v.v, {b, hk, j, d});
            attnv::store(v.out, {b, h, i, d}, o);
          }
          if (v.lse.present()) attnv::store(v.lse, {b, h, i, 0}, m + std::log(l));
        }
  }
};

}  // namespace

ATTNV_CONFORMANCE_SUITE(ConsumerPlainAttention, [] { return std::make_unique<PlainAttention>(); });
