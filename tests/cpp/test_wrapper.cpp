// The C++17 wrapper: RAII, moves, exceptions, callbacks, the pool. Run by tests/c_abi.rs.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "loopguard.hpp"

static int failures = 0;
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

int main() {
    // A loop halts, with the evidence.
    loopguard::Config config;
    loopguard::Stream stream(config);
    const char *words[] = {"We", " keep", " saying", " the", " same", " thing", "."};
    int halted_at = -1;
    int warns = 0, halts = 0;
    stream.on([&](uint64_t, const lg_verdict &) { warns++; }, [&](uint64_t, const lg_verdict &v) {
        halts++;
        CHECK(v.period == 7);
    });
    for (int i = 0; i < 300 && halted_at < 0; i++) {
        if (stream.push(static_cast<uint32_t>(i % 7), words[i % 7]) == LG_ACTION_HALT) halted_at = i;
    }
    CHECK(halted_at > 0 && warns == 1 && halts == 1);
    CHECK(stream.verdict().kind == LG_KIND_EXACT_LOOP);
    CHECK(stream.repeated_text().find("same thing") != std::string::npos);
    CHECK(stream.describe(LG_VERBOSITY_BRIEF).rfind("halt: exact_loop", 0) == 0);
    CHECK(stream.stats().halted_at == static_cast<uint64_t>(halted_at));
    CHECK(stream.memory_usage() <= 16 * 1024);

    // Speculative decoding: a halt reached only by drafts is taken back with them.
    {
        loopguard::Stream s(config);
        s.push(1, "Once");
        s.checkpoint();
        int drafts = 0;
        while (s.push(static_cast<uint32_t>(drafts % 7), words[drafts % 7]) != LG_ACTION_HALT) drafts++;
        CHECK(drafts < 60);
        CHECK(s.rollback(static_cast<size_t>(drafts + 1)) == LG_ACTION_CONTINUE);
        CHECK(s.stats().symbols == 1);
        bool threw = false;
        try {
            s.rollback(1000);
        } catch (const loopguard::Error &e) {
            threw = std::string(e.what()).find("n: 1000 pushes asked back") != std::string::npos;
        }
        CHECK(threw);
        s.commit();
    }

    // A callback that throws: the exception comes out of the push that called it (it cannot
    // cross the C library), the guard has recorded the push, and the stream stays usable.
    {
        loopguard::Stream s(config);
        s.on(nullptr, [](uint64_t, const lg_verdict &) { throw std::runtime_error("stop here"); });
        int thrown_at = -1;
        for (int i = 0; i < 300 && thrown_at < 0; i++) {
            try {
                s.push(static_cast<uint32_t>(i % 7), words[i % 7]);
            } catch (const std::runtime_error &e) {
                CHECK(std::string(e.what()) == "stop here");
                thrown_at = i;
            }
        }
        CHECK(thrown_at > 0 && s.verdict().action == LG_ACTION_HALT);
        CHECK(s.push(1, "x") == LG_ACTION_HALT);  // nothing pending any more: no throw
        s.reset();
        CHECK(s.push(1, "x") == LG_ACTION_CONTINUE);
    }
    // A re-entrant call from a callback throws Error(LG_ERR_REENTRANT) there, which reaches the
    // caller of the outer push instead of aborting the process.
    {
        loopguard::Stream s(config);
        s.on(nullptr, [&s](uint64_t, const lg_verdict &) { s.reset(); });
        bool reentrant = false;
        for (int i = 0; i < 300 && !reentrant; i++) {
            try {
                s.push(static_cast<uint32_t>(i % 7), words[i % 7]);
            } catch (const loopguard::Error &e) {
                reentrant = e.status() == LG_ERR_REENTRANT;
            }
        }
        CHECK(reentrant && s.verdict().action == LG_ACTION_HALT);
    }
    {
        loopguard::Pool p(config, 2);
        uint64_t a = p.add();
        p.on(nullptr, [](uint64_t, const lg_verdict &) { throw 42; });
        std::vector<uint8_t> acts;
        bool caught = false;
        for (int i = 0; i < 300 && !caught; i++) {
            try {
                p.push({a}, {static_cast<uint32_t>(i % 7)}, acts);
            } catch (int v) {
                caught = v == 42;
            }
        }
        CHECK(caught && p.verdict(a).action == LG_ACTION_HALT);
    }

    // Moves transfer ownership; clones copy the state.
    loopguard::Stream moved(std::move(stream));
    CHECK(moved.verdict().action == LG_ACTION_HALT);
    moved.reset();
    moved.push(1);
    loopguard::Stream copy = moved.clone();
    CHECK(copy.stats().symbols == 1);

    // Invalid settings throw, naming the field.
    loopguard::Config bad;
    bad.raw().halt_copies = 1;
    try {
        loopguard::Stream s(bad);
        CHECK(false);
    } catch (const loopguard::Error &e) {
        CHECK(e.status() == LG_ERR_CONFIG);
        CHECK(std::string(e.what()).find("halt_copies") != std::string::npos);
    }

    // Exempt patterns owned by the Config.
    loopguard::Config exempt;
    {
        std::string pattern = "same thing";
        exempt.add_exempt(pattern);
    }
    loopguard::Stream lenient(exempt);
    bool any_halt = false;
    for (int i = 0; i < 300; i++) any_halt |= lenient.push(static_cast<uint32_t>(i % 7), words[i % 7]) == LG_ACTION_HALT;
    CHECK(!any_halt);

    // The pool.
    loopguard::Pool pool(loopguard::Config(LG_PRESET_BALANCED), 4);
    std::vector<uint64_t> slots = {pool.add(), pool.add()};
    std::vector<uint64_t> halted;
    pool.on(nullptr, [&](uint64_t slot, const lg_verdict &) { halted.push_back(slot); });
    std::vector<uint8_t> actions;
    for (uint32_t i = 0; i < 200; i++) pool.push(slots, {i % 9, 10000 + i}, actions);
    CHECK(halted.size() == 1 && halted[0] == slots[0]);
    CHECK(pool.verdict(slots[0]).action == LG_ACTION_HALT);
    pool.remove(slots[1]);
    try {
        pool.verdict(slots[1]);
        CHECK(false);
    } catch (const loopguard::Error &e) {
        CHECK(e.status() == LG_ERR_NO_SLOT);
    }

    // vLLM-compatible settings.
    loopguard::Stream vllm(loopguard::Config::vllm(1, 8, 3));
    lg_action a = LG_ACTION_CONTINUE;
    for (int i = 0; i < 6; i++) a = vllm.push(static_cast<uint32_t>(i % 2));
    CHECK(a == LG_ACTION_HALT);

    if (failures != 0) {
        std::fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    // The agent guard: warn, then block on no progress, with recovery text.
    {
        loopguard::Agent agent;
        std::vector<lg_action> got;
        for (int i = 0; i < 4; i++) {
            got.push_back(agent.call("Bash", R"({"command": "git status"})"));
            agent.result("nothing to commit");
        }
        CHECK(got[2] == LG_ACTION_WARN && got[3] == LG_ACTION_BLOCK);
        loopguard::Agent moved(std::move(agent));
        CHECK(moved.call("Bash", R"({"command": "git status"})") == LG_ACTION_BLOCK);
        CHECK(moved.verdict().kind == LG_AGENT_KIND_IDENTICAL_CALL);
        CHECK(moved.describe().rfind("<loop-recovery>", 0) == 0);
        CHECK(moved.stats().blocks == 2);
        loopguard::Agent roo(LG_AGENT_PRESET_ROO_CODE);
        for (int i = 0; i < 3; i++) roo.call("t", "{}");
        CHECK(roo.call("t", "{}") == LG_ACTION_BLOCK);
        CHECK(roo.result("", "failed") == LG_ACTION_CONTINUE);
        bool threw = false;
        try {
            loopguard::Agent bad(static_cast<lg_agent_preset>(42));
        } catch (const loopguard::Error &e) {
            threw = e.status() == LG_ERR_INVALID_ARGUMENT;
        }
        CHECK(threw);
    }

    std::printf("test_wrapper: all checks passed\n");
    return 0;
}
