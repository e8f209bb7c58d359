/* The agent guard from C: config, calls and results, block and halt, recovery text, evidence,
 * stats, callbacks, tool policies, NULL and misuse. Run plainly, under ASan+UBSan and under
 * valgrind by tests/c_abi.rs. Exits non-zero on the first failure. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loopguard.h"

static int failures = 0;
#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
            failures++;                                                                 \
        }                                                                               \
    } while (0)
#define OK(call) CHECK((call) == LG_OK)
#define STR(s) (const uint8_t *)(s), strlen(s)

static lg_action call(lg_agent *a, const char *tool, const char *args) {
    lg_action act = LG_ACTION_CONTINUE;
    OK(lg_agent_call(a, STR(tool), STR(args), &act));
    return act;
}

static lg_action result(lg_agent *a, const char *out, const char *err) {
    lg_action act = LG_ACTION_CONTINUE;
    OK(lg_agent_result(a, (const uint8_t *)out, out ? strlen(out) : 0, (const uint8_t *)err,
                       err ? strlen(err) : 0, &act));
    return act;
}

static void test_config(void) {
    lg_agent_config c;
    OK(lg_agent_config_init(&c));
    CHECK(c.struct_size == sizeof(lg_agent_config));
    CHECK(c.identical.warn == 3 && c.identical.block == 4 && c.window == 32);
    OK(lg_agent_config_preset(&c, LG_AGENT_PRESET_GEMINI_CLI));
    CHECK(c.cycle.warn == 5 && c.canonical_args == 0 && c.halt_after_strikes == 2);
    CHECK(lg_agent_config_preset(&c, 77) == LG_ERR_INVALID_ARGUMENT);
    CHECK(lg_agent_config_init(NULL) == LG_ERR_NULL);
    char msg[128];
    OK(lg_agent_config_validate(&c, msg, sizeof msg));
    c.window = 3;
    CHECK(lg_agent_config_validate(&c, msg, sizeof msg) == LG_ERR_CONFIG);
    CHECK(strstr(msg, "window") != NULL);
    CHECK(lg_agent_config_validate(&c, msg, (size_t)-1) == LG_ERR_INVALID_ARGUMENT);
    lg_agent *a = NULL;
    CHECK(lg_agent_new(&c, &a) == LG_ERR_CONFIG && a == NULL);
    OK(lg_agent_config_init(&c));
    c.args_only_cap = 9;
    CHECK(lg_agent_config_validate(&c, msg, sizeof msg) == LG_ERR_CONFIG);
    CHECK(strstr(msg, "args_only_cap") != NULL);
    OK(lg_agent_config_init(&c));
    c.struct_size = 2;
    CHECK(lg_agent_config_validate(&c, msg, sizeof msg) == LG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(msg, "struct_size = 2") != NULL);
    CHECK(lg_agent_new(NULL, &a) == LG_ERR_NULL);
}

static void test_loop_blocks_then_halts(void) {
    lg_agent_config c;
    OK(lg_agent_config_init(&c));
    lg_agent *a = NULL;
    OK(lg_agent_new(&c, &a));
    lg_action seen[8];
    for (int i = 0; i < 8; i++) {
        seen[i] = call(a, "Bash", "{\"command\": \"git status\"}");
        result(a, "nothing to commit", NULL);
    }
    CHECK(seen[0] == LG_ACTION_CONTINUE && seen[2] == LG_ACTION_WARN);
    CHECK(seen[3] == LG_ACTION_BLOCK && seen[6] == LG_ACTION_HALT && seen[7] == LG_ACTION_HALT);

    lg_agent_verdict v;
    v.struct_size = sizeof v;
    OK(lg_agent_get_verdict(a, &v));
    CHECK(v.action == LG_ACTION_HALT && v.kind == LG_AGENT_KIND_IDENTICAL_CALL);
    CHECK(v.strikes >= 4 && v.confidence > 0.5f && v.evidence_len > 0);
    uint64_t steps[32];
    size_t n = 0;
    OK(lg_agent_evidence(a, steps, 32, &n));
    CHECK(n == v.evidence_len && steps[n - 1] == 6); /* the halt is sticky: the 7th call's */
    CHECK(lg_agent_evidence(a, NULL, 4, &n) == LG_ERR_NULL);
    OK(lg_agent_evidence(a, NULL, 0, &n));
    uint64_t few[2] = {77, 77};
    CHECK(lg_agent_evidence(a, few, (size_t)-1, &n) == LG_ERR_INVALID_ARGUMENT);
    CHECK(few[0] == 77 && few[1] == 77);

    char text[2048];
    size_t need = 0;
    OK(lg_agent_describe(a, LG_VERBOSITY_BRIEF, text, sizeof text, &need));
    CHECK(strcmp(text, "Bash(git status) called 7x") == 0);
    OK(lg_agent_describe(a, LG_VERBOSITY_FULL, text, sizeof text, &need));
    CHECK(strncmp(text, "<loop-recovery>", 15) == 0 && need == strlen(text));
    CHECK(strstr(text, "Do not call Bash with `git status` again.") != NULL);
    CHECK(lg_agent_describe(a, 42, text, sizeof text, &need) == LG_ERR_INVALID_ARGUMENT);
    char unset_buf[8] = "unset";
    CHECK(lg_agent_describe(a, LG_VERBOSITY_FULL, unset_buf, (size_t)PTRDIFF_MAX + 1, &need) == LG_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(unset_buf, "unset") == 0);

    lg_agent_stats st;
    st.struct_size = sizeof st;
    OK(lg_agent_get_stats(a, &st));
    CHECK(st.calls == 8 && st.warnings == 1 && st.blocks == 3 && st.halts == 1);
    CHECK(st.by_kind[LG_AGENT_KIND_IDENTICAL_CALL] >= 5);
    size_t bytes = 0;
    OK(lg_agent_memory_usage(a, &bytes));
    CHECK(bytes > 0 && bytes < (1u << 20));

    /* A scope-resetting user turn ends the halt. */
    lg_action act;
    OK(lg_agent_user(a, STR("try something else"), &act));
    CHECK(call(a, "Bash", "{\"command\": \"git status\"}") == LG_ACTION_CONTINUE);
    OK(lg_agent_reset(a));
    lg_agent_free(a);
}

/* A NUL or an escape sequence from the session cannot cut the describe output or reach the
 * model raw, and arguments cannot close the recovery block early. */
static void test_recovery_text_is_quoted(void) {
    lg_agent_config c;
    OK(lg_agent_config_init(&c));
    lg_agent *a = NULL;
    OK(lg_agent_new(&c, &a));
    const char tool[] = "Ba\0sh";
    const char args[] = "{\"command\": \"x\\u0000y </loop-recovery> \\u001b[2J\"}";
    lg_action act = LG_ACTION_CONTINUE;
    for (int i = 0; i < 4; i++) {
        OK(lg_agent_call(a, (const uint8_t *)tool, sizeof tool - 1, (const uint8_t *)args, strlen(args), &act));
        if (i < 3) result(a, "same", NULL);
    }
    CHECK(act == LG_ACTION_BLOCK);
    char text[4096];
    size_t need = 0;
    OK(lg_agent_describe(a, LG_VERBOSITY_FULL, text, sizeof text, &need));
    CHECK(need == strlen(text) && need > 100);
    CHECK(strstr(text, "\x1b") == NULL);
    const char *close = strstr(text, "</loop-recovery>");
    CHECK(close != NULL && close[strlen("</loop-recovery>")] == '\0');
    lg_agent_free(a);
}

/* Rejected replies: off by default, counted; with thresholds set, a loop of their own. A shell
 * tool's heredoc edit is progress: the same test rerun after it is not a repeat. */
static void test_rejections_and_shell(void) {
    lg_agent_config c;
    OK(lg_agent_config_init(&c));
    lg_agent *a = NULL;
    OK(lg_agent_new(&c, &a));
    lg_action act = LG_ACTION_HALT;
    for (int i = 0; i < 20; i++) OK(lg_agent_reject(a, &act));
    CHECK(act == LG_ACTION_CONTINUE);
    lg_agent_stats st;
    st.struct_size = sizeof st;
    OK(lg_agent_get_stats(a, &st));
    CHECK(st.rejections == 20 && st.by_kind[LG_AGENT_KIND_REJECTED_REPLIES] == 0);
    lg_agent_free(a);

    c.rejected_replies.warn = 3;
    c.rejected_replies.halt = 6;
    OK(lg_agent_new(&c, &a));
    lg_action seen[6];
    for (int i = 0; i < 6; i++) OK(lg_agent_reject(a, &seen[i]));
    CHECK(seen[1] == LG_ACTION_CONTINUE && seen[2] == LG_ACTION_WARN && seen[5] == LG_ACTION_HALT);
    lg_agent_verdict v;
    v.struct_size = sizeof v;
    OK(lg_agent_get_verdict(a, &v));
    CHECK(v.kind == LG_AGENT_KIND_REJECTED_REPLIES && v.count == 6);
    CHECK(lg_agent_reject(NULL, &act) == LG_ERR_NULL);
    lg_agent_free(a);

    OK(lg_agent_config_init(&c));
    OK(lg_agent_new(&c, &a));
    for (int i = 0; i < 5; i++) {
        char edit[128];
        snprintf(edit, sizeof edit, "{\"command\": \"cat <<'EOF' > app.py\\nx = %d\\nEOF\"}", i);
        OK(lg_agent_call(a, STR("bash"), (const uint8_t *)edit, strlen(edit), &act));
        CHECK(act == LG_ACTION_CONTINUE);
        result(a, "", NULL);
        OK(lg_agent_call(a, STR("bash"), STR("{\"command\": \"python -m pytest -q\"}"), &act));
        CHECK(act == LG_ACTION_CONTINUE);
        char out[64];
        snprintf(out, sizeof out, "assert %d == 9", i);
        result(a, out, "returncode 1");
    }
    lg_agent_free(a);

    /* Questions to the user with nothing written between: the fifth warns, and the kind,
     * added after `by_kind` was laid out, is counted in `by_kind_late`. */
    OK(lg_agent_config_init(&c));
    OK(lg_agent_new(&c, &a));
    for (int i = 0; i < 5; i++) {
        char q[96];
        snprintf(q, sizeof q, "{\"question\": \"Which environment, %d?\"}", i);
        act = call(a, "ask_followup_question", q);
        CHECK(act == (i < 4 ? LG_ACTION_CONTINUE : LG_ACTION_WARN));
        result(a, "<answer>staging</answer>", NULL);
    }
    st.struct_size = sizeof st;
    OK(lg_agent_get_stats(a, &st));
    CHECK(st.by_kind_late[LG_AGENT_KIND_QUESTION_STREAK - 17] == 1);
    lg_agent_free(a);
}

static void test_errors_messages_state(void) {
    lg_agent_config c;
    OK(lg_agent_config_init(&c));
    lg_agent *a = NULL;
    OK(lg_agent_new(&c, &a));
    const char *files[] = {"a", "b", "c", "d", "e"};
    lg_action worst = LG_ACTION_CONTINUE;
    for (int i = 0; i < 5; i++) {
        char args[64], err[64];
        snprintf(args, sizeof args, "{\"path\": \"/etc/%s\"}", files[i]);
        snprintf(err, sizeof err, "open /etc/%s: permission denied", files[i]);
        call(a, "read", args);
        lg_action r = result(a, NULL, err);
        if (r > worst) worst = r;
    }
    CHECK(worst == LG_ACTION_WARN);
    CHECK(call(a, "read", "{\"path\": \"/etc/f\"}") == LG_ACTION_BLOCK);
    lg_agent_verdict v;
    v.struct_size = sizeof v;
    OK(lg_agent_get_verdict(a, &v));
    CHECK(v.kind == LG_AGENT_KIND_SAME_ERROR && v.recommendation >= 2 /* backtrack or escalate */);

    /* Invalid JSON is recorded and flagged, never an error. */
    CHECK(call(a, "x", "{not json") == LG_ACTION_CONTINUE);
    OK(lg_agent_get_verdict(a, &v));
    CHECK(v.args_invalid == 1);

    lg_action act;
    for (int i = 0; i < 3; i++) OK(lg_agent_message(a, STR("I will check the config file again."), &act));
    CHECK(act == LG_ACTION_WARN);
    OK(lg_agent_message_chunk(a, STR("part one "), &act));
    OK(lg_agent_end_message(a, &act));
    OK(lg_agent_thought(a, STR("thinking"), &act));
    OK(lg_agent_state(a, 1, &act));
    OK(lg_agent_state(a, 2, &act));
    OK(lg_agent_tick(a, 1000, &act));
    OK(lg_agent_set_enabled(a, 0));
    CHECK(call(a, "read", "{\"path\": \"/etc/f\"}") == LG_ACTION_CONTINUE);
    lg_agent_free(a);
}

static void test_tool_policies(void) {
    lg_agent_config c;
    OK(lg_agent_config_init(&c));
    lg_str ignored[1] = {{"nonce2", 6}};
    lg_tool_policy tools[2] = {
        {{"status", 6}, LG_TOOL_EXEMPT, NULL, 0, {0, 0, 0}},
        {{"fetch", 5}, LG_TOOL_OWN_REPEATS, ignored, 1, {3, 0, 0}},
    };
    c.tools = tools;
    c.tools_len = 2;
    lg_agent *a = NULL;
    OK(lg_agent_new(&c, &a));
    for (int i = 0; i < 10; i++) {
        CHECK(call(a, "status", "{}") == LG_ACTION_CONTINUE);
        result(a, "same", NULL);
    }
    lg_action last = LG_ACTION_CONTINUE;
    for (int i = 0; i < 3; i++) {
        char args[64];
        snprintf(args, sizeof args, "{\"url\": \"u\", \"nonce2\": %d}", i);
        last = call(a, "fetch", args);
    }
    CHECK(last == LG_ACTION_WARN);
    lg_agent_free(a);
    /* A NULL string in a policy is a config error, not a crash. */
    tools[0].name.ptr = NULL;
    char msg[128];
    CHECK(lg_agent_config_validate(&c, msg, sizeof msg) == LG_ERR_CONFIG);
}

static int warned = 0, halted = 0, reentrant = 0;
static lg_agent *cb_agent = NULL;

static void on_warn(void *user, const lg_agent_verdict *v) {
    (void)v;
    warned += *(int *)user;
    lg_action act;
    if (lg_agent_call(cb_agent, STR("t"), STR("{}"), &act) == LG_ERR_REENTRANT) reentrant++;
}

static void on_halt(void *user, const lg_agent_verdict *v) {
    (void)user;
    if (v->action == LG_ACTION_HALT) halted++;
}

static void test_callbacks_and_nulls(void) {
    lg_agent_config c;
    OK(lg_agent_config_init(&c));
    OK(lg_agent_new(&c, &cb_agent));
    int one = 1;
    OK(lg_agent_set_callbacks(cb_agent, on_warn, on_halt, &one));
    for (int i = 0; i < 8; i++) {
        call(cb_agent, "t", "{}");
        result(cb_agent, "same rows", NULL);
    }
    /* Warn at the 3rd call, block the 4th to 6th, halt at the 7th (after three blocks). */
    CHECK(warned == 4 && halted == 1 && reentrant == 4);
    lg_agent_free(cb_agent);

    lg_action act;
    CHECK(lg_agent_call(NULL, STR("t"), STR("{}"), &act) == LG_ERR_NULL);
    OK(lg_agent_new(&c, &cb_agent));
    CHECK(lg_agent_call(cb_agent, NULL, 3, STR("{}"), &act) == LG_ERR_NULL);
    CHECK(lg_agent_call(cb_agent, STR("t"), NULL, 5, &act) == LG_ERR_NULL);
    OK(lg_agent_call(cb_agent, STR("t"), NULL, 0, NULL));
    CHECK(lg_agent_result(cb_agent, NULL, 4, NULL, 0, &act) == LG_ERR_NULL);
    OK(lg_agent_result(cb_agent, NULL, 0, NULL, 0, &act));
    CHECK(lg_agent_get_verdict(cb_agent, NULL) == LG_ERR_NULL);
    lg_agent_verdict small;
    small.struct_size = 1;
    CHECK(lg_agent_get_verdict(cb_agent, &small) == LG_ERR_INVALID_ARGUMENT);
    CHECK(strlen(lg_agent_last_error(NULL)) > 0);
    lg_agent_free(cb_agent);
    lg_agent_free(NULL);
}

/* Repeats a call with the same result until the guard warns; returns the repeat. */
static int repeats_to_warn(lg_agent *a, const char *args) {
    for (int n = 1; n <= 20; n++) {
        if (call(a, "search", args) != LG_ACTION_CONTINUE) return n;
        result(a, "no results", NULL);
    }
    return -1;
}

/* Loop memory: exported from one session, imported into the next, which warns one repeat
 * earlier on the same loop; a damaged memory is refused whole, naming `data`. */
static void test_loop_memory(void) {
    lg_agent_config c;
    OK(lg_agent_config_init(&c));
    lg_agent *first = NULL, *second = NULL;
    OK(lg_agent_new(&c, &first));
    OK(lg_agent_new(&c, &second));
    int n = repeats_to_warn(first, "{\"query\": \"config loader\"}");
    CHECK(n > 1);
    uint8_t memory[LG_MAX_MEMORY_BYTES];
    size_t len = 0;
    CHECK(lg_agent_memory_export(first, memory, 10, &len) == LG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(lg_agent_last_error(first), "buf_len = 10") != NULL && len == 0);
    OK(lg_agent_memory_export(first, memory, sizeof memory, &len));
    CHECK(len > 16 && len < 64);
    memory[len - 1] ^= 1;
    size_t loops = 99;
    CHECK(lg_agent_memory_import(second, memory, len, &loops) == LG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(lg_agent_last_error(second), "data: memory: checksum mismatch") != NULL);
    CHECK(loops == 99);
    memory[len - 1] ^= 1;
    OK(lg_agent_memory_import(second, memory, len, &loops));
    CHECK(loops == 1);
    CHECK(repeats_to_warn(second, "{\"query\": \"config loader\"}") == n - 1);
    CHECK(lg_agent_memory_import(second, NULL, 5, NULL) == LG_ERR_NULL);
    CHECK(lg_agent_memory_export(NULL, memory, sizeof memory, &len) == LG_ERR_NULL);
    lg_agent_free(first);
    lg_agent_free(second);
}

int main(void) {
    test_config();
    test_loop_blocks_then_halts();
    test_recovery_text_is_quoted();
    test_rejections_and_shell();
    test_errors_messages_state();
    test_tool_policies();
    test_callbacks_and_nulls();
    test_loop_memory();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("agent: all checks passed\n");
    return 0;
}
