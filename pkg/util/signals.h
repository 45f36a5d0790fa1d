// SetupSignalHandler (controller-runtime's signals.SetupSignalHandler): turns SIGTERM and SIGINT
// into a stop token for a process's graceful shutdown. Call it once, from main, before starting
// any other thread (threads inherit the blocked signal mask it sets).
#pragma once

#include <chrono>
#include <stop_token>

namespace kcm {

// The first SIGTERM or SIGINT requests the returned token's stop; a second one ends the process at
// once (exit code 1). A positive shutdown_bound also ends the process that long after the first
// signal, should the graceful stop not have finished by then.
std::stop_token SetupSignalHandler(std::chrono::seconds shutdown_bound = std::chrono::seconds(0));

}  // namespace kcm
