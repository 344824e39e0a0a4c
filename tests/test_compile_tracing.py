"""The tracing rule of chainrule.compile, trap by trap: each works as in eager or raises TracingError.

Issue 22.2 listed the silent ones: no_grad() or chainrule.grad inside the traced function, a thread
reading a placeholder, `type(x) is Value`, and Python state (random numbers, a counter) frozen at trace
time. Reference values come from the eager engine, example by example.
"""

from __future__ import annotations

import itertools
import random
import threading

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


def test_no_grad_over_parameters_only_still_works_as_in_eager():
    p = Value(0.5)

    def fn(x):
        with chainrule.no_grad():
            frozen = p * 3.0  # no placeholder involved: a constant, as in eager
        return x * frozen

    compiled = chainrule.compile(fn, [p])
    values, grads = compiled.value_and_grad(XS)
    np.testing.assert_array_equal(values, eager_values(fn, XS))
    assert grads.tolist() == [0.0]  # a constant: no gradient reaches p, as in eager


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

    with pytest.raises(TracingError, match="different graph.*random numbers"):
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
