#!/usr/bin/python3
"""splitmix64-seeded xoshiro256** (the published algorithms of Vigna et al.), written here
independently of Arbor's C++: prints the first N 64-bit outputs for a seed, one per line."""
import sys

M = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return state, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M


def main():
    seed, n = int(sys.argv[1]), int(sys.argv[2])
    s, x = [], seed
    for _ in range(4):
        x, z = splitmix64(x)
        s.append(z)
    for _ in range(n):
        out = (rotl((s[1] * 5) & M, 7) * 9) & M
        t = (s[1] << 17) & M
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        print(out)


if __name__ == "__main__":
    main()
