// loopguard.hpp: a header-only C++17 wrapper over include/loopguard.h.
//
// Move-only RAII handles; errors are thrown as loopguard::Error (status + message). Threading
// is the C library's: a Stream or Pool may move between threads but not be used by two at
// once; a Config is plain data any thread may read.
//
//     loopguard::Config config;                       // balanced preset
//     loopguard::Stream stream(config);
//     for (auto [id, piece] : tokens)
//         if (stream.push(id, piece) == LG_ACTION_HALT) {
//             std::cerr << stream.describe(LG_VERBOSITY_SUMMARY) << "\n";
//             break;
//         }
#ifndef LOOPGUARD_HPP
#define LOOPGUARD_HPP

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loopguard.h"

namespace loopguard {

// A failed call: the status and the most specific message available.
class Error : public std::runtime_error {
  public:
    Error(lg_status status, const std::string &message)
        : std::runtime_error(message), status_(status) {}
    lg_status status() const noexcept { return status_; }

  private:
    lg_status status_;
};

namespace detail {
inline void check(lg_status status, const char *detail = nullptr) {
    if (status == LG_OK) return;
    std::string msg = lg_status_str(static_cast<int32_t>(status));
    if (detail != nullptr && *detail != '\0') msg += std::string(": ") + detail;
    throw Error(status, msg);
}
}  // namespace detail

// Plain settings (copied by Stream and Pool at construction). Owns the pattern strings it is
// given, so a Config may outlive the strings passed to add_breaker / add_exempt.
class Config {
  public:
    Config() { detail::check(lg_stream_config_init(&c_)); }
    explicit Config(lg_preset preset) { detail::check(lg_stream_config_preset(&c_, preset)); }
    static Config vllm(uint32_t min_pattern, uint32_t max_pattern, uint32_t min_count) {
        Config c;
        detail::check(lg_stream_config_vllm(&c.c_, min_pattern, max_pattern, min_count));
        return c;
    }

    lg_stream_config &raw() noexcept { return c_; }
    void add_breaker(std::string_view s) { breakers_.emplace_back(s); }
    void add_exempt(std::string_view s) { exempt_.emplace_back(s); }

    // The config as the C library reads it, with the pattern arrays filled in. Throws
    // Error(LG_ERR_CONFIG) naming the field when a value is out of range.
    const lg_stream_config &prepared() const {
        view_breakers_ = strs(breakers_);
        view_exempt_ = strs(exempt_);
        prepared_ = c_;
        prepared_.breakers = view_breakers_.data();
        prepared_.breakers_len = view_breakers_.size();
        prepared_.exempt = view_exempt_.data();
        prepared_.exempt_len = view_exempt_.size();
        char msg[256];
        detail::check(lg_stream_config_validate(&prepared_, msg, sizeof msg), msg);
        return prepared_;
    }

  private:
    static std::vector<lg_str> strs(const std::vector<std::string> &v) {
        std::vector<lg_str> out;
        for (const auto &s : v) out.push_back(lg_str{s.data(), s.size()});
        return out;
    }
    lg_stream_config c_{};
    std::vector<std::string> breakers_, exempt_;
    mutable std::vector<lg_str> view_breakers_, view_exempt_;
    mutable lg_stream_config prepared_{};
};

// Called from a push when a sequence starts warning or halts. It may throw: the exception
// cannot cross the C library, so the wrapper holds it and rethrows it from the push that
// called the callback, once the guard has recorded that push. A callback must not call back
// into the same Stream or Pool: that call throws Error(LG_ERR_REENTRANT), which reaches the
// caller the same way.
using Callback = std::function<void(uint64_t slot, const lg_verdict &verdict)>;

namespace detail {
struct Callbacks {
    Callback on_warn, on_halt;
    // The first exception a callback threw during the current call, for the wrapper to rethrow.
    std::exception_ptr pending;

    static void warn(void *user, uint64_t slot, const lg_verdict *v) noexcept {
        static_cast<Callbacks *>(user)->invoke(&Callbacks::on_warn, slot, *v);
    }
    static void halt(void *user, uint64_t slot, const lg_verdict *v) noexcept {
        static_cast<Callbacks *>(user)->invoke(&Callbacks::on_halt, slot, *v);
    }
    // Rethrows what a callback threw during the last call, if anything.
    void rethrow() {
        if (pending) std::rethrow_exception(std::exchange(pending, nullptr));
    }

  private:
    void invoke(Callback Callbacks::*which, uint64_t slot, const lg_verdict &v) noexcept {
        // After one callback threw, the rest of this call's callbacks are skipped.
        if (pending || !(this->*which)) return;
        try {
            (this->*which)(slot, v);
        } catch (...) {
            pending = std::current_exception();
        }
    }
};
}  // namespace detail

// One sequence's guard.
class Stream {
  public:
    explicit Stream(const Config &config) { detail::check(lg_stream_new(&config.prepared(), &s_)); }
    ~Stream() { lg_stream_free(s_); }
    Stream(Stream &&o) noexcept : s_(std::exchange(o.s_, nullptr)), cb_(std::move(o.cb_)) {}
    Stream &operator=(Stream &&o) noexcept {
        if (this != &o) {
            lg_stream_free(s_);
            s_ = std::exchange(o.s_, nullptr);
            cb_ = std::move(o.cb_);
        }
        return *this;
    }
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;

    // A full copy of the state (a forked sequence); callbacks are not copied.
    Stream clone() const {
        lg_stream *out = nullptr;
        check(lg_stream_clone(s_, &out));
        return Stream(out);
    }

    lg_action push(uint32_t token) { return push(token, nullptr, 0); }
    lg_action push(uint32_t token, std::string_view piece) {
        return push(token, reinterpret_cast<const uint8_t *>(piece.data()), piece.size(), true);
    }
    lg_action push_text(std::string_view text) {
        lg_action a = LG_ACTION_CONTINUE;
        check(lg_stream_push_text(s_, reinterpret_cast<const uint8_t *>(text.data()), text.size(), &a));
        return a;
    }
    lg_action finish_text() {
        lg_action a = LG_ACTION_CONTINUE;
        check(lg_stream_finish_text(s_, &a));
        return a;
    }
    void reset() { check(lg_stream_reset(s_)); }

    // Speculative decoding: pushes after checkpoint() can be taken back with rollback(n), which
    // returns the action of the last push kept; commit() keeps them all.
    void checkpoint() { check(lg_stream_checkpoint(s_)); }
    lg_action rollback(size_t n) {
        lg_action a = LG_ACTION_CONTINUE;
        check(lg_stream_rollback(s_, n, &a));
        return a;
    }
    void commit() { check(lg_stream_commit(s_)); }

    lg_verdict verdict() const {
        lg_verdict v{};
        v.struct_size = sizeof v;
        check(lg_stream_verdict(s_, &v));
        return v;
    }
    lg_stats stats() const {
        lg_stats st{};
        st.struct_size = sizeof st;
        check(lg_stream_stats(s_, &st));
        return st;
    }
    std::string repeated_text() const {
        const uint8_t *p = nullptr;
        size_t n = 0;
        check(lg_stream_repeated_text(s_, &p, &n));
        return std::string(reinterpret_cast<const char *>(p), n);
    }
    std::string describe(lg_verbosity verbosity = LG_VERBOSITY_SUMMARY) const {
        size_t need = 0;
        check(lg_stream_describe(s_, verbosity, nullptr, 0, &need));
        std::string out(need + 1, '\0');
        check(lg_stream_describe(s_, verbosity, out.data(), out.size(), &need));
        out.resize(need);
        return out;
    }
    size_t memory_usage() const {
        size_t n = 0;
        check(lg_stream_memory_usage(s_, &n));
        return n;
    }
    // Callbacks must not call back into this Stream (that throws LG_ERR_REENTRANT there).
    void on(Callback on_warn, Callback on_halt) {
        cb_ = std::make_unique<detail::Callbacks>(detail::Callbacks{std::move(on_warn), std::move(on_halt), nullptr});
        check(lg_stream_set_callbacks(s_, detail::Callbacks::warn, detail::Callbacks::halt, cb_.get()));
    }
    lg_stream *raw() noexcept { return s_; }

  private:
    explicit Stream(lg_stream *s) : s_(s) {}
    lg_action push(uint32_t token, const uint8_t *piece, size_t len, bool has_piece = false) {
        lg_action a = LG_ACTION_CONTINUE;
        // An empty piece is still a piece: pass a non-NULL pointer for it.
        static const uint8_t empty = 0;
        const uint8_t *p = has_piece ? (piece != nullptr ? piece : &empty) : nullptr;
        check(lg_stream_push_token(s_, token, p, len, &a));
        return a;
    }
    void check(lg_status st) const {
        if (cb_) cb_->rethrow();
        detail::check(st, s_ != nullptr ? lg_stream_last_error(s_) : nullptr);
    }
    lg_stream *s_ = nullptr;
    std::unique_ptr<detail::Callbacks> cb_;
};

// Many sequences of a batched server.
class Pool {
  public:
    Pool(const Config &config, size_t capacity) {
        detail::check(lg_pool_new(&config.prepared(), capacity, &p_));
    }
    ~Pool() { lg_pool_free(p_); }
    Pool(Pool &&o) noexcept : p_(std::exchange(o.p_, nullptr)), cb_(std::move(o.cb_)) {}
    Pool &operator=(Pool &&o) noexcept {
        if (this != &o) {
            lg_pool_free(p_);
            p_ = std::exchange(o.p_, nullptr);
            cb_ = std::move(o.cb_);
        }
        return *this;
    }
    Pool(const Pool &) = delete;
    Pool &operator=(const Pool &) = delete;

    uint64_t add() {
        uint64_t slot = 0;
        check(lg_pool_add(p_, &slot));
        return slot;
    }
    void remove(uint64_t slot) { check(lg_pool_remove(p_, slot)); }
    void reset(uint64_t slot) { check(lg_pool_reset(p_, slot)); }
    void checkpoint(uint64_t slot) { check(lg_pool_checkpoint(p_, slot)); }
    lg_action rollback(uint64_t slot, size_t n) {
        lg_action a = LG_ACTION_CONTINUE;
        check(lg_pool_rollback(p_, slot, n, &a));
        return a;
    }
    void commit(uint64_t slot) { check(lg_pool_commit(p_, slot)); }
    // Pushes tokens[i] into slots[i]; actions receives one lg_action per pair.
    void push(const std::vector<uint64_t> &slots, const std::vector<uint32_t> &tokens, std::vector<uint8_t> &actions) {
        if (slots.size() != tokens.size()) throw Error(LG_ERR_INVALID_ARGUMENT, "slots and tokens differ in length");
        actions.resize(slots.size());
        check(lg_pool_push(p_, slots.data(), tokens.data(), slots.size(), actions.data()));
    }
    lg_verdict verdict(uint64_t slot) const {
        lg_verdict v{};
        v.struct_size = sizeof v;
        check(lg_pool_verdict(p_, slot, &v));
        return v;
    }
    void on(Callback on_warn, Callback on_halt) {
        cb_ = std::make_unique<detail::Callbacks>(detail::Callbacks{std::move(on_warn), std::move(on_halt), nullptr});
        check(lg_pool_set_callbacks(p_, detail::Callbacks::warn, detail::Callbacks::halt, cb_.get()));
    }
    lg_pool *raw() noexcept { return p_; }

  private:
    void check(lg_status st) const {
        if (cb_) cb_->rethrow();
        detail::check(st, p_ != nullptr ? lg_pool_last_error(p_) : nullptr);
    }
    lg_pool *p_ = nullptr;
    std::unique_ptr<detail::Callbacks> cb_;
};

// One agent session's guard. Feed it each tool call before it runs and its result after; a
// Block action means "do not run this call". Move-only.
class Agent {
  public:
    explicit Agent(lg_agent_preset preset = LG_AGENT_PRESET_DEFAULT) {
        lg_agent_config c{};
        detail::check(lg_agent_config_preset(&c, preset));
        detail::check(lg_agent_new(&c, &a_));
    }
    explicit Agent(const lg_agent_config &config) { detail::check(lg_agent_new(&config, &a_)); }
    ~Agent() { lg_agent_free(a_); }
    Agent(Agent &&o) noexcept : a_(std::exchange(o.a_, nullptr)) {}
    Agent &operator=(Agent &&o) noexcept {
        if (this != &o) {
            lg_agent_free(a_);
            a_ = std::exchange(o.a_, nullptr);
        }
        return *this;
    }
    Agent(const Agent &) = delete;
    Agent &operator=(const Agent &) = delete;

    lg_action call(std::string_view tool, std::string_view json_args) {
        lg_action a = LG_ACTION_CONTINUE;
        check(lg_agent_call(a_, bytes(tool), tool.size(), bytes(json_args), json_args.size(), &a));
        return a;
    }
    // The result of the last call: its output, and its error message when it failed.
    lg_action result(std::string_view output) { return result(output, nullptr, 0); }
    lg_action result(std::string_view output, std::string_view error) {
        return result(output, error.empty() ? &empty_ : bytes(error), error.size());
    }
    lg_action message(std::string_view text) {
        lg_action a = LG_ACTION_CONTINUE;
        check(lg_agent_message(a_, bytes(text), text.size(), &a));
        return a;
    }
    lg_action user(std::string_view text) {
        lg_action a = LG_ACTION_CONTINUE;
        check(lg_agent_user(a_, bytes(text), text.size(), &a));
        return a;
    }
    lg_action state(uint64_t fingerprint) {
        lg_action a = LG_ACTION_CONTINUE;
        check(lg_agent_state(a_, fingerprint, &a));
        return a;
    }
    void reset() { check(lg_agent_reset(a_)); }
    void set_enabled(bool on) { check(lg_agent_set_enabled(a_, on ? 1 : 0)); }

    lg_agent_verdict verdict() const {
        lg_agent_verdict v{};
        v.struct_size = sizeof v;
        check(lg_agent_get_verdict(a_, &v));
        return v;
    }
    lg_agent_stats stats() const {
        lg_agent_stats st{};
        st.struct_size = sizeof st;
        check(lg_agent_get_stats(a_, &st));
        return st;
    }
    // Brief for logs, summary for a person, full: the <loop-recovery> block for the model.
    std::string describe(lg_verbosity verbosity = LG_VERBOSITY_FULL) const {
        size_t need = 0;
        check(lg_agent_describe(a_, verbosity, nullptr, 0, &need));
        std::string out(need + 1, '\0');
        check(lg_agent_describe(a_, verbosity, out.data(), out.size(), &need));
        out.resize(need);
        return out;
    }
    lg_agent *raw() noexcept { return a_; }

  private:
    static inline const uint8_t empty_ = 0;
    static const uint8_t *bytes(std::string_view s) {
        return s.empty() ? &empty_ : reinterpret_cast<const uint8_t *>(s.data());
    }
    lg_action result(std::string_view output, const uint8_t *error, size_t error_len) {
        lg_action a = LG_ACTION_CONTINUE;
        check(lg_agent_result(a_, bytes(output), output.size(), error, error_len, &a));
        return a;
    }
    void check(lg_status st) const { detail::check(st, a_ != nullptr ? lg_agent_last_error(a_) : nullptr); }
    lg_agent *a_ = nullptr;
};

}  // namespace loopguard

#endif  // LOOPGUARD_HPP
