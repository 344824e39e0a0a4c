"""The tracing rule of chainrule.compile, trap by trap: each works as in eager or raises TracingError.

Issue 22.2 listed the silent ones: no_grad() or chainrule.grad inside the traced function, a thread
reading a placeholder, `type(x) is Value`, and Python state (random numbers, a counter) frozen at trace
time. Reference values come from the eager engine, example by example.
"""

from __future__ import annotations

import datetime
import itertools
import os
import random
import re
import secrets
import threading
import time

import numpy as np
import pytest

import chainrule
from chainrule import TracingError, Value

XS = np.array([-1.5, 0.25, 2.0])


def eager_values(fn, xs):
    return np.array([fn(Value(float(x))).data for x in xs])


def test_no_grad_inside_the_traced_function_is_refused_with_the_reason():
    p = Value(0.5)

    def fn(x):
        with chainrule.no_grad():
            scale = x * p  # a constant in eager code; here it would depend on the example
        return x * scale

    with pytest.raises(TracingError, match=r"computing under no_grad\(\)"):
        chainrule.compile(fn, [p])
    assert chainrule.is_grad_enabled()  # the mode is restored


def test_no_grad_over_parameters_only_is_refused_naming_the_line():
    p = Value(0.5)

    def fn(x):
        with chainrule.no_grad():
            frozen = p * 3.0  # a constant at p's value now: an SGD step on p would never reach it
        return x * frozen

    with pytest.raises(TracingError, match=r"no_grad\(\) from parameters.*test_compile_tracing.py:\d+ \(frozen = p \* 3.0"):
        chainrule.compile(fn, [p])
    assert type(p) is Value and p.data == 0.5  # the parameter is a plain Value again


def test_grad_without_create_graph_is_refused_and_with_it_works_as_in_eager():
    p = Value(0.7)

    def numbers(x):
        return chainrule.grad((x * p).tanh(), [x])[0] * p

    with pytest.raises(TracingError, match=r"chainrule.grad\(...\) without create_graph=True"):
        chainrule.compile(numbers, [p])

    def graph(x):
        return chainrule.grad((x * p).tanh(), [x], create_graph=True)[0] * x

    compiled = chainrule.compile(graph, [p])
    np.testing.assert_allclose(compiled.values(XS), eager_values(graph, XS), rtol=1e-14)


def test_a_thread_reading_a_placeholder_fails_the_compile_not_just_the_thread():
    p = Value(2.0)

    def read(y):
        try:
            float((y * 2.0).data)
        except TracingError:
            pass  # the thread swallows it: the compile must fail all the same

    def fn(x):
        y = x * p
        worker = threading.Thread(target=read, args=(y,))
        worker.start()
        worker.join()
        return y

    with pytest.raises(TracingError, match=r"reading x.data.*raised in a thread"):
        chainrule.compile(fn, [p])


def test_nodes_made_in_a_thread_the_function_starts_are_traced():
    p = Value(2.0)

    def fn(x):
        box = []
        worker = threading.Thread(target=lambda: box.append((x * p).tanh()))
        worker.start()
        worker.join()
        return box[0] * x

    compiled = chainrule.compile(fn, [p])
    np.testing.assert_allclose(compiled.values(XS), eager_values(fn, XS), rtol=1e-14)


def test_another_threads_eager_work_is_untouched_while_tracing():
    p = Value(2.0)
    started, done, seen = threading.Event(), threading.Event(), []

    def worker():
        started.wait()
        a = Value(3.0)
        b = a * a
        b.backward()
        seen.append((b.data, a.grad, p.data))
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()

    def fn(x):
        started.set()
        done.wait()
        return x * p

    chainrule.compile(fn, [p])
    thread.join()
    assert seen == [(9.0, 6.0, 2.0)]


def test_a_refusal_caught_inside_the_function_still_fails_the_compile():
    def fn(x):
        try:
            return x * 2.0 if float(x) > 0 else x * 0.0
        except Exception:
            return x  # eager code never gets here: the graph would be a different one

    with pytest.raises(TracingError, match=r"float\(x\).*caught inside the function"):
        chainrule.compile(fn, [])


def test_type_is_value_is_false_for_a_placeholder_and_the_other_branch_is_refused():
    """type() cannot be made to lie: a placeholder's exact type is a subclass. isinstance and __class__
    say Value; code that takes the non-Value branch reads a number, which is refused."""
    seen = {}

    def fn(x):
        seen["isinstance"] = isinstance(x, Value)
        seen["__class__"] = x.__class__ is Value
        return x * 2.0 if type(x) is Value else Value(float(x)) * 2.0

    with pytest.raises(TracingError, match=r"float\(x\)"):
        chainrule.compile(fn, [])
    assert seen == {"isinstance": True, "__class__": True}


def test_a_random_dropout_mask_is_refused_as_python_state():
    p = Value(0.5)
    rng = random.Random(3)

    def fn(x):
        hidden = [(x * p + k).tanh() for k in range(8)]
        kept = [h for h in hidden if rng.random() < 0.5]  # a new mask at every call
        return sum(kept, Value(0.0))

    with pytest.raises(TracingError, match=r"drawing a random number \(random\(\)\).*if rng.random\(\) < 0.5"):
        chainrule.compile(fn, [p])


def test_a_call_counter_is_refused_as_python_state():
    calls = itertools.count()

    def fn(x):
        return x * float(next(calls))

    with pytest.raises(TracingError, match="call counter"):
        chainrule.compile(fn, [])


def test_a_mask_given_as_an_input_column_works():
    p = Value(0.5)

    def fn(x, keep):
        return (x * p).tanh() * keep * 2.0

    compiled = chainrule.compile(fn, [p])
    keep = np.array([1.0, 0.0, 1.0])
    expected = [fn(Value(float(x)), Value(float(k))).data for x, k in zip(XS, keep)]
    np.testing.assert_allclose(compiled.values(XS, keep), expected, rtol=1e-14)


def test_detect_anomaly_around_tracing_does_not_flag_the_placeholders():
    p = Value(0.5)
    with chainrule.detect_anomaly():
        compiled = chainrule.compile(lambda x: (x * p).exp(), [p])
    np.testing.assert_allclose(compiled.values(XS), np.exp(XS * 0.5), rtol=1e-15)


def test_params_array_replaces_the_values_data_and_load_writes_it_back():
    p, q = Value(0.5), Value(-1.0)
    compiled = chainrule.compile(lambda x: (x * p + q).tanh(), [p, q])
    theta = compiled.parameter_values()
    assert theta.tolist() == [0.5, -1.0]
    theta[:] = [2.0, 0.25]
    values, _ = compiled.value_and_grad(XS, params=theta)
    np.testing.assert_allclose(values, np.tanh(XS * 2.0 + 0.25), rtol=1e-15)
    assert (p.data, q.data) == (0.5, -1.0)  # untouched until load
    compiled.load(theta)
    assert (p.data, q.data) == (2.0, 0.25)
    with pytest.raises(ValueError, match=r"one number per parameter, shape \(2,\)"):
        compiled.values(XS, params=[1.0])


def test_a_refusal_in_one_tracing_thread_does_not_fail_another_threads_compile():
    p = Value(0.5)
    inside, release, errors, compiled = threading.Event(), threading.Event(), [], []

    def patient(x):  # traced in a thread while the main thread's compile fails
        inside.set()
        release.wait()
        return x * p

    worker = threading.Thread(target=lambda: compiled.append(chainrule.compile(patient, [p])))
    worker.start()
    inside.wait()
    try:
        chainrule.compile(lambda x: x * float(x), [])
    except TracingError as error:
        errors.append(error)
    release.set()
    worker.join()
    assert len(errors) == 1 and len(compiled) == 1
    np.testing.assert_allclose(compiled[0].values(XS), XS * 0.5, rtol=1e-15)


# --- refusals that name the line: Python state and a parameter's number, taken while tracing ------------------


def test_a_dropout_mask_from_the_random_module_is_refused_whatever_the_draws() -> None:
    # Before, compile accepted it whenever its two traces happened to draw the same mask (43-82 % of seeds).
    p = Value(0.5)

    def fn(x):
        hidden = [(x * p + k).tanh() for k in range(3)]
        return sum((h for h in hidden if random.random() < 0.5), Value(0.0)) + x  # a frozen mask

    for seed in range(20):
        random.seed(seed)
        with pytest.raises(TracingError, match=r"drawing a random number.*if random.random\(\) < 0.5"):
            chainrule.compile(fn, [p])


def test_numpys_random_and_a_generator_made_inside_are_refused_too() -> None:
    with pytest.raises(TracingError, match=r"drawing a random number from numpy.random"):
        chainrule.compile(lambda x: x * float(np.random.rand() < 0.5), [])
    with pytest.raises(TracingError, match=r"drawing a random number.*random.Random\(0\).random\(\)"):
        chainrule.compile(lambda x: x * random.Random(0).random(), [])


def test_reading_p_grad_inside_the_traced_function_is_refused_naming_the_line() -> None:
    p = Value(0.5)
    p.grad = 3.0

    def fn(x):
        return x * p - p.grad  # the last backward()'s gradient, frozen

    with pytest.raises(TracingError, match=r"reading p.grad of a parameter.*\(return x \* p - p.grad"):
        chainrule.compile(fn, [p])
    assert p.grad == 3.0 and type(p) is Value


def test_grad_over_the_parameters_only_is_refused_and_with_create_graph_follows_an_sgd_step() -> None:
    p = Value(0.5)

    def numbers(x):
        (slope,) = chainrule.grad(p * p, [p])  # 2 p as a number, frozen
        return x * slope

    with pytest.raises(TracingError, match=r"chainrule.grad\(...\) without create_graph=True.*\(\(slope,\) = chainrule"):
        chainrule.compile(numbers, [p])

    def graph(x):
        (slope,) = chainrule.grad(p * p, [p], create_graph=True)  # 2 p as a Value: read at every call
        return x * slope

    compiled = chainrule.compile(graph, [p])
    assert compiled.values(XS).tolist() == (XS * 1.0).tolist()
    p.data = 2.0  # an SGD step
    assert compiled.values(XS).tolist() == (XS * 4.0).tolist()


def test_a_threads_refusal_is_a_tracing_error_naming_its_line_not_the_functions_own_key_error() -> None:
    def fn(x):
        found = {}

        def worker():
            found["number"] = float(x)  # refused in the thread, which then dies

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        return x * found["number"]  # KeyError: the thread stored nothing

    with pytest.raises(TracingError, match=r"float\(x\).*found\[\"number\"\] = float\(x\).*KeyError"):
        chainrule.compile(fn, [])


def test_parameters_are_plain_values_again_after_tracing_and_in_other_threads_meanwhile() -> None:
    p = Value(2.0)
    compiled = chainrule.compile(lambda x: x * p + p * p, [p])
    assert type(p) is Value and float(p) == 2.0 and p.data == 2.0 and bool(p)
    assert compiled.values(XS).tolist() == (XS * 2.0 + 4.0).tolist()


# --- grad(create_graph=True) traced through relu, abs and pow with a Value exponent ---------------------------


def test_a_relu_gradient_penalty_compiles_and_matches_eager_example_by_example() -> None:
    # docs/engine.md's gradient-norm penalty of a relu network, compiled.
    rng = random.Random(0)
    w = [Value(rng.uniform(-1, 1)) for _ in range(6)]

    def penalty(x0, x1):
        hidden = [(w[0] * x0 + w[1] * x1).relu(), (w[2] * x0 + w[3] * x1).relu()]
        score = w[4] * hidden[0] + w[5] * hidden[1]
        gx = chainrule.grad(score, [x0, x1], create_graph=True)
        return gx[0] * gx[0] + gx[1] * gx[1]

    xs0 = np.array([0.3, -0.7, 1.2, 0.0, -2.0])
    xs1 = np.array([-0.4, 0.9, 0.5, 0.0, 1.5])
    compiled = chainrule.compile(penalty, w)
    values, grads = compiled.value_and_grad(xs0, xs1)
    for p in w:
        p.grad = 0.0
    expected = []
    for a, b in zip(xs0, xs1):
        out = penalty(Value(float(a)), Value(float(b)))
        out.backward()
        expected.append(out.data)
    np.testing.assert_allclose(values, expected, rtol=1e-13)
    np.testing.assert_allclose(grads, [p.grad for p in w], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name, fn", [
    ("abs", lambda x, p: chainrule.grad(abs(x * p) * x, [x], create_graph=True)[0] * p),
    ("pow with a Value exponent", lambda x, p: chainrule.grad(x.exp() ** (x * p), [x], create_graph=True)[0]),
    ("zero base", lambda x, p: chainrule.grad((x - x) ** (x * p + 1.0), [x], create_graph=True)[0] + x),
])
def test_grad_with_create_graph_traces_abs_and_pow_with_a_value_exponent(name, fn) -> None:
    p = Value(0.8)
    xs = np.array([-1.5, -0.2, 0.0, 0.4, 1.3])
    compiled = chainrule.compile(lambda x: fn(x, p), [p])
    values, grads = compiled.value_and_grad(xs)
    p.grad = 0.0
    expected = []
    for x in xs:
        out = fn(Value(float(x)), p)
        out.backward()
        expected.append(out.data)
    np.testing.assert_allclose(values, expected, rtol=1e-13, equal_nan=True)
    np.testing.assert_allclose(grads, [p.grad], rtol=1e-12, equal_nan=True)


def test_the_refusal_names_every_method_of_the_op_table_logaddexp_included() -> None:
    from chainrule.ops import functions

    with pytest.raises(TracingError) as refused:
        chainrule.compile(lambda x: x * float(x), [])
    assert all(name in str(refused.value) for name in functions()), str(refused.value)
    assert "logaddexp" in str(refused.value) and "sin" in str(refused.value)


# --- random draws and clock reads: refused at their line every time, whatever the draw ------------------------
# Before, a draw from a NumPy Generator compiled silently whenever the two traces recorded the same graph
# (rng.random() < 0.5 twice alike), and os.urandom, time.time() and numpy.random's functions were caught only
# by the second trace's comparison, without a line.

RNG = np.random.default_rng(7)
LEGACY = np.random.RandomState(7)


class _Noisy:
    def __init__(self) -> None:
        self.rng = np.random.default_rng(3)

    def __call__(self, x):
        h = x * 2.0
        keep = float(self.rng.random() < 0.5)  # an attribute's generator
        return h * keep


def _in_a_closure():
    rng = np.random.default_rng(5)

    def fn(x):
        keep = float(rng.random() < 0.5)  # a closure's generator
        return x * keep

    return fn


def _through_a_bound_method(x):
    draw = RNG.integers
    keep = float(draw(0, 2))  # through a bound method in a local
    return x * keep


def _assigned_inside(x):
    rng = [RNG][0]
    keep = float(rng.random() < 0.5)  # a local assigned from an expression
    return x * keep


# Each draws on its own line, `keep = ...`, which the refusal must name.
def _draw_0(x):
    keep = float(np.random.default_rng().random() < 0.5)
    return x * keep


def _draw_1(x):
    keep = float(RNG.random() < 0.5)
    return x * keep


def _draw_2(x):
    keep = RNG.normal()
    return x * keep


def _draw_3(x):
    keep = float(RNG.integers(0, 2))
    return x * keep


def _draw_4(x):
    keep = float(LEGACY.rand() < 0.5)
    return x * keep


def _draw_5(x):
    keep = float(np.random.rand() < 0.5)
    return x * keep


def _draw_6(x):
    keep = float(np.random.permutation(2)[0])
    return x * keep


def _draw_7(x):
    keep = float(random.random() < 0.5)
    return x * keep


def _draw_8(x):
    keep = float(random.Random().random() < 0.5)
    return x * keep


def _draw_9(x):
    keep = float(os.urandom(1)[0] % 2)
    return x * keep


def _draw_10(x):
    keep = float(secrets.randbelow(2))
    return x * keep


def _draw_11(x):
    keep = time.time()
    return x * keep


def _draw_12(x):
    keep = float(time.perf_counter() > 0)
    return x * keep


def _draw_13(x):
    keep = float(datetime.datetime.now().microsecond % 2)
    return x * keep


DRAWS = {
    'a new default_rng()': (_draw_0, 'float(np.random.default_rng().random() < 0.5)'),
    "a Generator's random()": (_draw_1, 'float(RNG.random() < 0.5)'),
    "a Generator's normal()": (_draw_2, 'RNG.normal()'),
    "a Generator's integers()": (_draw_3, 'float(RNG.integers(0, 2))'),
    'a RandomState': (_draw_4, 'float(LEGACY.rand() < 0.5)'),
    'numpy.random.rand()': (_draw_5, 'float(np.random.rand() < 0.5)'),
    'numpy.random.permutation()': (_draw_6, 'float(np.random.permutation(2)[0])'),
    'random.random()': (_draw_7, 'float(random.random() < 0.5)'),
    'a random.Random': (_draw_8, 'float(random.Random().random() < 0.5)'),
    'os.urandom()': (_draw_9, 'float(os.urandom(1)[0] % 2)'),
    'secrets': (_draw_10, 'float(secrets.randbelow(2))'),
    'time.time()': (_draw_11, 'time.time()'),
    'time.perf_counter()': (_draw_12, 'float(time.perf_counter() > 0)'),
    'datetime.now()': (_draw_13, 'float(datetime.datetime.now().microsecond % 2)'),
}


@pytest.mark.parametrize("fn, line", DRAWS.values(), ids=DRAWS.keys())
def test_a_random_draw_or_a_clock_read_is_refused_at_its_line_every_time(fn, line) -> None:
    for _ in range(25):
        with pytest.raises(TracingError, match=r"is not allowed while chainrule.compile traces.*Refused at "
                                               r".*test_compile_tracing.py:\d+ \(keep = " + re.escape(line) + r"\)"):
            chainrule.compile(fn, [])


@pytest.mark.parametrize("fn, line", [
    (_Noisy(), "keep = float(self.rng.random() < 0.5)"),
    (_in_a_closure(), "keep = float(rng.random() < 0.5)"),
    (_through_a_bound_method, "keep = float(draw(0, 2))"),
    (_assigned_inside, "keep = float(rng.random() < 0.5)"),
], ids=["an attribute", "a closure", "a bound method", "a local assigned inside"])
def test_a_generator_reached_any_way_is_refused_at_its_line_every_time(fn, line) -> None:
    for _ in range(25):
        with pytest.raises(TracingError, match=r"drawing a random number from a NumPy Generator.*"
                                               r"test_compile_tracing.py:\d+ \(" + re.escape(line)):
            chainrule.compile(fn, [])


def test_a_draw_made_on_the_first_call_only_is_kept_as_eager_code_keeps_it() -> None:
    made = []

    def fn(x):
        if not made:  # a weight drawn on first use, then reused by every call, eager or compiled
            made.append(RNG.normal())
        return x * made[0]

    compiled = chainrule.compile(fn, [])
    np.testing.assert_allclose(compiled.values(XS), eager_values(fn, XS), rtol=1e-15)


def test_a_clock_read_inside_a_library_is_not_the_functions_and_is_allowed() -> None:
    import logging

    logger = logging.getLogger("chainrule.tests.frozen")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False

    def fn(x):
        logger.warning("traced")  # logging stamps the record with the time; the graph never sees it
        return x * 2.0

    compiled = chainrule.compile(fn, [])
    assert compiled.values(XS).tolist() == (XS * 2.0).tolist()


def test_python_state_seen_on_the_second_call_is_refused_naming_its_line_and_both_values() -> None:
    calls = []

    def grows(x):
        calls.append(1)
        y = x * 2.0
        return y * float(len(calls))  # 1.0 at the first call, 2.0 at the second

    counter = itertools.count()

    def deepens(x):
        y = x
        for _ in range(next(counter) % 2 + 1):
            y = y.tanh()  # one tanh at the first call, two at the second
        return y

    for _ in range(5):
        with pytest.raises(TracingError, match=r"\(the constant [\d.]+ in the first call, the constant [\d.]+ in "
                                               r"the second\).*test_compile_tracing.py:\d+ \(return y \* float"):
            chainrule.compile(grows, [])
        with pytest.raises(TracingError, match=r"\(no more nodes in the first call, a tanh node in the second\).*"
                                               r"test_compile_tracing.py:\d+ \(y = y.tanh\(\)"):
            chainrule.compile(deepens, [])


def test_a_thread_another_thread_starts_while_tracing_draws_and_reads_the_clock_freely() -> None:
    # A server compiles in one request while another request's thread, started meanwhile by the server's
    # thread pool, trains with its own seed: that thread is not the traced function's, and nothing in it
    # may be refused (the lesson server's driven plot once never answered because of this).
    tracing, done = threading.Event(), threading.Event()
    seen: list[object] = []

    def other_work():
        try:
            random.seed(7)
            seen.append((random.random(), time.time() > 0, len(os.urandom(2)), np.random.default_rng(7).random()))
        except BaseException as error:  # noqa: BLE001 - what the test reports
            seen.append(error)
        done.set()

    def pool():  # started before the trace, as a server's event loop is; it starts its worker during the trace
        tracing.wait()
        worker = threading.Thread(target=other_work)
        worker.start()
        worker.join()

    starter = threading.Thread(target=pool)
    starter.start()

    calls = []

    def fn(x):
        calls.append(x)
        if len(calls) == 2:  # the second call is the one traced with random draws and the clock watched
            tracing.set()
            done.wait()
        return x * 2.0

    compiled = chainrule.compile(fn, [])
    starter.join()
    random.seed(7)
    assert seen == [(random.random(), True, 2, np.random.default_rng(7).random())]
    assert compiled.values(XS).tolist() == (XS * 2.0).tolist()


def test_a_random_draw_in_a_thread_the_traced_function_starts_is_refused_at_its_line() -> None:
    def draw(box):
        try:
            box.append(random.random())  # a mask drawn in a helper thread is frozen all the same
        except TracingError:
            pass  # the thread swallows it: the compile must fail all the same

    def fn(x):
        box: list[float] = []
        worker = threading.Thread(target=draw, args=(box,))
        worker.start()
        worker.join()
        return x * (box[0] if box else 1.0)

    with pytest.raises(TracingError, match=r"drawing a random number \(random\(\)\).*box.append\(random.random"):
        chainrule.compile(fn, [])


def test_traces_in_two_threads_that_end_in_either_order_leave_new_threads_hooks_as_they_were() -> None:
    before = (threading.getprofile(), threading.gettrace())
    a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()
    compiled: list[object] = []

    def traced(mine: threading.Event, other: threading.Event, wait_after: threading.Event | None):
        calls = []

        def fn(x):
            calls.append(x)
            if len(calls) == 2:  # both second calls, the watched ones, overlap
                mine.set()
                other.wait()
                if wait_after is not None:
                    wait_after.wait()  # the other trace, begun later, ends first
            return x * 3.0

        return fn

    def first():
        compiled.append(chainrule.compile(traced(a_inside, b_inside, None), []))
        a_done.set()

    thread = threading.Thread(target=first)
    thread.start()
    compiled.append(chainrule.compile(traced(b_inside, a_inside, a_done), []))
    thread.join()
    assert len(compiled) == 2
    assert (threading.getprofile(), threading.gettrace()) == before


def test_a_thread_the_traced_function_starts_draws_freely_once_the_compile_has_returned() -> None:
    # A pool the function starts outlives the trace: its threads must not stay watched (refused) for good.
    after, drawn = threading.Event(), []
    threads: list[threading.Thread] = []

    def later():
        after.wait()
        try:
            drawn.append((random.random() >= 0, time.time() > 0))
        except TracingError as error:  # what the test reports
            drawn.append(error)

    def fn(x):
        thread = threading.Thread(target=later, daemon=True)
        thread.start()
        threads.append(thread)
        return x * 2.0

    chainrule.compile(fn, [])
    after.set()
    for thread in threads:
        thread.join()
    assert drawn == [(True, True)] * len(threads)
