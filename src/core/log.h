// Internal access to the spdlog logger named "layoutguard" (public code uses layoutguard/log.h).
#pragma once

#include <spdlog/logger.h>

namespace lg::logging {

// The logger, created on first use with the level from LAYOUTGUARD_LOG_LEVEL.
spdlog::logger& logger();

}  // namespace lg::logging
