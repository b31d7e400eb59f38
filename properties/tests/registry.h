#pragma once
// The property registry lives with the conformance suite (properties/conformance/registry.h);
// the tests name it from their own namespace.
#include "properties/conformance/registry.h"

namespace attnv::props::testing {
using props::property;
using props::property_registry;
using props::PropertyEntry;
using props::rounding_campaign_options;
}  // namespace attnv::props::testing
