#pragma once
// The certificate as one self-contained HTML page: inline CSS, inline SVG charts drawn here, one
// small inline script (switches the scatter coloring, then sets document.body.dataset.ready =
// "1"); no network resource of any kind, so it opens the same offline, in a CI artifact viewer
// or years later. Shows: the verdict, the kernel and its precision model, the requirement x
// dtype grid, the findings with their reproduce commands, per dtype the per-element
// error/bound histogram, the ten worst cases, and the covered shape space (Tq x Tk per dtype).
// Every piece of text from the certificate is HTML-escaped.
#include <string>

#include "report/certificate.h"

namespace attnv::report {

std::string to_html(const Certificate& c);

}  // namespace attnv::report
