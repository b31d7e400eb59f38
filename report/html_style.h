#pragma once
// The inline stylesheet and script of the HTML certificate (internal to attnv_report).
namespace attnv::report::detail {

extern const char* const kPageCss;
extern const char* const kPageScript;

}  // namespace attnv::report::detail
