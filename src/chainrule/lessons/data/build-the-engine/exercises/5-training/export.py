# ---------------------------------------------------------------------------------------------------------
# Run this file on its own (python3 FILE): it draws the two moons, trains your network on them with your
# train(), and says how the loss fell and how many points your network then puts on the right side.
import math
import random


def two_moons(n, noise, seed):
    """n points on two interleaved half circles, labels -1 (upper) and +1 (lower), with Gaussian noise."""
    rng = random.Random(seed)
    half = n // 2
    examples = []
    for i in range(half):
        t = math.pi * i / max(half - 1, 1)
        examples.append(([math.cos(t), math.sin(t)], -1))
    for i in range(n - half):
        t = math.pi * i / max(n - half - 1, 1)
        examples.append(([1 - math.cos(t), 0.5 - math.sin(t)], 1))
    rng.shuffle(examples)
    points = [[x + rng.gauss(0, noise), y + rng.gauss(0, noise)] for (x, y), _ in examples]
    return points, [label for _, label in examples]


if __name__ == "__main__":
    random.seed(1)
    points, labels = two_moons(40, 0.1, 2)
    model = MLP(2, [8, 1])
    losses = train(model, points, labels, 60, 0.3)
    right = sum((1 if model(x)[0].data > 0 else -1) == y for x, y in zip(points, labels))
    print(f"loss {losses[0]:.4f} at step 1, {losses[-1]:.4f} at step {len(losses)}")
    print(f"{right} of {len(points)} points on the right side of your network's boundary")
