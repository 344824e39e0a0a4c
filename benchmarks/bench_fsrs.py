"""Fitting FSRS's parameters: chainrule's compiled replay (progress/fitting.py, no PyTorch) against py-fsrs's own
optimizer (PyTorch), side by side in one process, on the same review logs.

The logs are simulated (fitting.simulated_reviews): learners whose memory follows FSRS with parameters away from
the defaults, reviewing each card when FSRS schedules it, give or take, and recalling it with FSRS's probability.
For each size both fit all the logs; both results are scored by py-fsrs's own log-loss (Optimizer's batch loss),
and the times are CPU time (time.process_time), compile included for chainrule, medians of --repeats runs.
Then the held-out check that decides whether a fit schedules (fitting.fit): four cards in five fitted, both
parameter sets scored on the fifth.
Run: python benchmarks/bench_fsrs.py [--cards 100 300 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from fsrs import Optimizer, Rating, ReviewLog

from chainrule.progress import fitting

TRUTH = list(fitting.DEFAULT_PARAMETERS)
TRUTH[0], TRUTH[2], TRUTH[8], TRUTH[10], TRUTH[20] = 0.1, 0.8, 1.2, 0.9, 0.45


def cpu(work):
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cards", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| cards | reviews | predictions | chainrule fit, CPU | py-fsrs fit, CPU | time ratio | log-loss: defaults "
          "| chainrule | py-fsrs | chainrule / py-fsrs |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for cards in args.cards:
        reviews = fitting.simulated_reviews(cards, TRUTH, seed=cards)
        histories = list(fitting.histories_of(reviews).values())
        reference = Optimizer([ReviewLog(card_id=r.card + 1, rating=Rating(r.rating), review_datetime=r.at,
                                         review_duration=None) for r in reviews])
        ours_times, theirs_times = [], []
        for _ in range(args.repeats):
            seconds, (ours, _) = cpu(lambda: fitting.adam(fitting.FsrsLoss(histories)))
            ours_times.append(seconds)
            seconds, theirs = cpu(reference.compute_optimal_parameters)
            theirs_times.append(seconds)
        score = reference._compute_batch_loss  # py-fsrs's own log-loss, for both
        loss = fitting.FsrsLoss(histories)
        defaults, ours_loss, theirs_loss = (score(parameters=list(p)) for p in (fitting.DEFAULT_PARAMETERS, ours, theirs))
        print(f"| {cards:,} | {len(reviews):,} | {loss.scored:,} | {statistics.median(ours_times):.2f} s "
              f"| {statistics.median(theirs_times):.2f} s | {statistics.median(ours_times) / statistics.median(theirs_times):.2f} "
              f"| {defaults:.4f} | {ours_loss:.4f} | {theirs_loss:.4f} | {ours_loss / theirs_loss:.4f} |")
    print()
    print("Held out (fitting.fit: four cards in five fitted, the fifth scored):")
    print("| cards | held-out predictions | defaults | fitted | used |")
    print("|---:|---:|---:|---:|---|")
    for cards in args.cards:
        result = fitting.fit(fitting.simulated_reviews(cards, TRUTH, seed=cards + 1))
        print(f"| {cards:,} | {result.held_out_predictions:,} | {result.default_loss:.4f} | {result.fitted_loss:.4f} "
              f"| {'yes' if result.used else 'no'} |")
    small = fitting.fit(fitting.simulated_reviews(25, fitting.DEFAULT_PARAMETERS, seed=8))
    print(f"| 25, learners as the defaults | {small.held_out_predictions:,} | {small.default_loss:.4f} | "
          f"{small.fitted_loss:.4f} | {'yes' if small.used else 'no'} |")
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
