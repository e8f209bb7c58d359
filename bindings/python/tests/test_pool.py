import array

import numpy as np
import pytest

import loopguard as lg
from loopguard import Action


def test_a_batch_advances_every_slot_in_one_call():
    with lg.Pool(capacity=256) as pool:
        slots = np.array([pool.add() for _ in range(256)], dtype=np.uint64)
        rng = np.random.default_rng(7)
        # Even slots loop with period 8; odd slots are random.
        halted = np.zeros(256, dtype=bool)
        for t in range(120):
            tokens = np.where(np.arange(256) % 2 == 0, 1000 + t % 8, rng.integers(0, 50_000, 256))
            out = pool.push(slots, tokens.astype(np.uint32))
            assert out.dtype == np.uint8 and out.shape == (256,)
            halted |= out == Action.HALT
        assert halted[0::2].all() and not halted[1::2].any()
        v = pool.verdict(int(slots[0]))
        assert v.action == Action.HALT and v.period == 8


def test_buffers_and_sequences_and_a_caller_output():
    with lg.Pool(capacity=4) as pool:
        a, b = pool.add(), pool.add()
        out = bytearray(2)
        for t in range(60):
            res = pool.push(array.array("Q", [a, b]), array.array("I", [t % 3, t]), out=out)
            assert res is out
        assert out[0] == Action.HALT and out[1] == Action.CONTINUE
        assert pool.push([a, b], [1, 2]) == bytearray([Action.HALT, Action.CONTINUE])
        pool.reset(a)
        assert pool.verdict(a).action == Action.CONTINUE


def test_bad_batches_are_refused():
    with lg.Pool(capacity=2) as pool:
        a = pool.add()
        pool.add()
        with pytest.raises(lg.LoopguardError, match="pool"):
            pool.add()
        with pytest.raises(ValueError, match="1 slots but 2 tokens"):
            pool.push([a], [1, 2])
        with pytest.raises(lg.LoopguardError):
            pool.push([a, 999], [1, 2])
        assert pool.verdict(a).at == 0 and pool.verdict(a).action == Action.CONTINUE
        with pytest.raises(ValueError, match="slots holds -1: out of range"):
            pool.push(np.array([-1]), np.array([1]))
        with pytest.raises(ValueError, match="out holds 1"):
            pool.push([a, a], [1, 2], out=bytearray(1))
        pool.remove(a)
        with pytest.raises(lg.LoopguardError):
            pool.push([a], [1])
    with pytest.raises(ValueError):
        lg.Pool(capacity=0)


def test_pool_push_refuses_values_that_do_not_fit():
    import numpy as np

    pool = lg.Pool(capacity=2)
    s = pool.add()
    for bad in (-1, 2**33):
        with pytest.raises(ValueError, match=r"tokens\[0\] = .* out of range"):
            pool.push([s], [bad])
        with pytest.raises(ValueError, match="tokens holds .* out of range"):
            pool.push(np.array([s], dtype=np.uint64), np.array([bad], dtype=np.int64))
    with pytest.raises(ValueError, match=r"slots\[0\] = -1"):
        pool.push([-1], [5])
    with pytest.raises(TypeError, match="integer array"):
        pool.push(np.array([s]), np.array([1.5]))
    with pytest.raises(ValueError, match="slot = -1"):
        pool.verdict(-1)
    with pytest.raises(ValueError, match="capacity = 0"):
        lg.Pool(capacity=0)
    assert list(pool.push([s], [2**32 - 1])) == [int(Action.CONTINUE)]
