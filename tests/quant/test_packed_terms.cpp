// The packed sub-block terms (engine/src/quant/quant_blocks_packed.hpp, which the GPU row dots
// and tiles use) against each format's reference terms: for random blocks and activations,
// including the extreme codes and activations, every sub-block's SubTerms must be identical
// (the float fields bit for bit, the integer sums exactly). Runs the portable form of dot4 and
// of the IQ4 table lookup, and with prmt emulated lut16_nibbles's permutation form and
// iq4nl_two_dots (the GPU's IQ4_XS and IQ4_NL decode dots, ARBOR_MK_IQ4_TWO_DOTS); the GPU forms
// are checked by gpu_logits_exact on the device.
#include "quant/quant_blocks_packed.hpp"

#include <QRandomGenerator>
#include <QtTest>

#include <cstring>
#include <type_traits>
#include <vector>

namespace qb = arbor::quant::blocks;

namespace {

// PTX prmt.b32 in its default mode: bytes 0-3 of x, 4-7 of y; a selector nibble's bits 0-2 pick a
// byte, its bit 3 asks for that byte's sign replicated (0xff or 0x00); the low 16 bits count.
uint32_t prmt(uint32_t x, uint32_t y, uint32_t sel) {
    const uint64_t v = (uint64_t(y) << 32) | x;
    uint32_t r = 0;
    for (int k = 0; k < 4; ++k) {
        const uint32_t c = (sel >> (4 * k)) & 15u;
        uint32_t b = uint32_t(v >> (8 * (c & 7u))) & 0xffu;
        if (c & 8u) b = (b & 0x80u) ? 0xffu : 0u;
        r |= b << (8 * k);
    }
    return r;
}

// Offsets of the fp16 fields of one block, made finite so the float fields compare by bits.
template <class Fmt>
std::vector<int> half_fields() {
    if constexpr (std::is_same_v<Fmt, qb::Q4_K> || std::is_same_v<Fmt, qb::Q5_K>) return {0, 2};
    else if constexpr (std::is_same_v<Fmt, qb::Q6_K>) return {208};
    else if constexpr (std::is_same_v<Fmt, qb::Q2_K>) return {80, 82};
    else if constexpr (std::is_same_v<Fmt, qb::MXFP4>) return {};  // an exponent byte: every value is finite
    else return {0};
}

bool same(const qb::SubTerms& x, const qb::SubTerms& y) {
    return std::memcmp(&x.ws, &y.ws, 4) == 0 && x.i1 == y.i1 && std::memcmp(&x.wm, &y.wm, 4) == 0 && x.i2 == y.i2;
}

// mode 0: random bytes; 1: every byte 0xff (largest codes); 2: every byte 0 (smallest codes).
template <class Fmt>
int check_format(QRandomGenerator& rng, int blocks, const char* name) {
    int checked = 0;
    // 16-byte aligned storage; the blocks sit at offset `lead` (a multiple of the format's
    // packed alignment) so the row start is as aligned as the format requires and no more.
    constexpr int kLead = qb::Packed<Fmt>::kAlign;
    std::vector<uint32_t> store((kLead + Fmt::kBytes + 16) / 4 + 1);
    std::vector<uint32_t> astore(8 + 1);
    for (int i = 0; i < blocks; ++i) {
        const int mode = i < 4 ? 1 : i < 8 ? 2 : 0;
        uint8_t* b = reinterpret_cast<uint8_t*>(store.data()) + kLead;
        for (int k = 0; k < Fmt::kBytes; ++k) b[k] = mode == 1 ? 0xff : mode == 2 ? 0 : uint8_t(rng.bounded(256));
        for (int off : half_fields<Fmt>()) {
            const uint16_t h = uint16_t((rng.bounded(2) << 15) | (rng.bounded(1, 30) << 10) | rng.bounded(1024));
            b[off] = uint8_t(h);
            b[off + 1] = uint8_t(h >> 8);
        }
        int8_t* a = reinterpret_cast<int8_t*>(astore.data());
        int32_t asum = 0;
        for (int k = 0; k < 32; ++k) {
            const int v = (i % 3 == 1) ? 127 : (i % 3 == 2) ? -127 : int(rng.bounded(255)) - 127;
            a[k] = int8_t(v);
            asum += v;
        }
        for (int sb = 0; sb < Fmt::kSubs; ++sb) {
            const qb::SubTerms want = Fmt::terms(b, sb, a, asum);
            // Formats without a min term ignore the block's stored sum: so must the packed form.
            const int32_t pasum = Fmt::kHasMin ? asum : asum + 12345;
            const qb::SubTerms got = qb::packed_terms<Fmt>(b, sb, a, pasum);
            if (!same(want, got)) {
                qWarning("%s block %d sub-block %d: packed (%g, %d, %g, %d), reference (%g, %d, %g, %d)", name, i, sb,
                         double(got.ws), got.i1, double(got.wm), got.i2, double(want.ws), want.i1, double(want.wm),
                         want.i2);
                return -1;
            }
            ++checked;
        }
    }
    return checked;
}

}  // namespace

class TestPackedTerms : public QObject {
    Q_OBJECT
private slots:
    void matchesReference() {
        QRandomGenerator rng(20261130);
        const int n = 4000;
        QCOMPARE(check_format<qb::Q4_0>(rng, n, "Q4_0"), n);
        QCOMPARE(check_format<qb::Q8_0>(rng, n, "Q8_0"), n);
        QCOMPARE(check_format<qb::Q4_K>(rng, n, "Q4_K"), 8 * n);
        QCOMPARE(check_format<qb::Q5_K>(rng, n, "Q5_K"), 8 * n);
        QCOMPARE(check_format<qb::Q6_K>(rng, n, "Q6_K"), 8 * n);
        QCOMPARE(check_format<qb::IQ4_XS>(rng, n, "IQ4_XS"), 8 * n);
        static_assert(qb::Packed<qb::IQ4_NL>::kHas && qb::Packed<qb::MXFP4>::kHas, "host code has every packed form");
        QCOMPARE(check_format<qb::IQ4_NL>(rng, n, "IQ4_NL"), n);
        QCOMPARE(check_format<qb::MXFP4>(rng, n, "MXFP4"), n);  // 17-byte blocks at an odd address
    }

    // The grids as words (what the packed forms and the device's iq4nl_value/mxfp4_value read)
    // against the host's tables, for every index and with the bits above the nibble set.
    void gridWords() {
        for (uint32_t i = 0; i < 64; ++i) {
            QCOMPARE(qb::grid16_value(i, qb::kIq4nlW0, qb::kIq4nlW1, qb::kIq4nlW2, qb::kIq4nlW3), qb::iq4nl_value(i));
            QCOMPARE(qb::grid16_value(i, qb::kMxfp4W0, qb::kMxfp4W1, qb::kMxfp4W2, qb::kMxfp4W3), qb::mxfp4_value(i));
        }
        for (uint32_t n = 0; n < 0x10000u; ++n) {  // lut16's four lookups against the table's
            const uint32_t w = (n & 0xf) | ((n >> 4 & 0xf) << 8) | ((n >> 8 & 0xf) << 16) | ((n >> 12 & 0xf) << 24);
            const uint32_t g = qb::lut16(w, qb::kMxfp4W0, qb::kMxfp4W1, qb::kMxfp4W2, qb::kMxfp4W3);
            for (int k = 0; k < 4; ++k) QCOMPARE(int(int8_t(uint8_t(g >> (8 * k)))), qb::mxfp4_value(w >> (8 * k)));
        }
    }

    // Formats without a packed form fall back to their reference terms.
    void fallsBack() {
        static_assert(!qb::Packed<qb::Q2_K>::kHas);
        QRandomGenerator rng(7);
        QCOMPARE(check_format<qb::Q2_K>(rng, 200, "Q2_K"), 8 * 200);
    }

    // The branch-free scale/min extraction (the packed Q4_K/Q5_K path) against k4_scale_min,
    // for random scale bytes and for each byte at 0x00, 0x3f, 0x40, 0xc0 and 0xff.
    void k4ScaleWords() {
        QRandomGenerator rng(4);
        uint8_t s[12];
        auto check = [&]() {
            uint32_t w[3];
            std::memcpy(w, s, 12);
            for (int j = 0; j < 8; ++j) {
                int sc0, m0, sc1, m1;
                qb::k4_scale_min(s, j, &sc0, &m0);
                qb::k4_scale_min_w(w[0], w[1], w[2], j, &sc1, &m1);
                if (sc0 != sc1 || m0 != m1) return false;
            }
            return true;
        };
        for (int i = 0; i < 200000; ++i) {
            for (uint8_t& v : s) v = uint8_t(rng.bounded(256));
            QVERIFY(check());
        }
        const uint8_t edge[5] = {0x00, 0x3f, 0x40, 0xc0, 0xff};
        for (int i = 0; i < 20000; ++i) {
            for (uint8_t& v : s) v = edge[rng.bounded(5)];
            QVERIFY(check());
        }
    }

    void lut16PicksEachEntry() {
        constexpr uint32_t t0 = 0x03020100u, t1 = 0x07060504u, t2 = 0x0b0a0908u, t3 = 0x0f0e0d0cu;
        for (uint32_t i = 0; i < 16; ++i)
            for (uint32_t j = 0; j < 16; ++j) {
                const uint32_t n = i | (j << 8) | (((i + j) & 15) << 16) | ((15 - i) << 24);
                QCOMPARE(qb::lut16(n, t0, t1, t2, t3), n);  // the identity table returns the indices
            }
    }

    // lut16_nibbles's permutation form (the GPU's, with __byte_perm) run here with prmt emulated,
    // against two lut16 calls: every 16-bit half of a word (each half is looked up on its own),
    // then random words, with the IQ4_NL table (negative entries: a selector asking for the sign
    // would show) and an identity table.
    void lut16NibblesPermMatchesLut16() {
        const uint32_t tabs[2][4] = {{qb::kIq4nlW0, qb::kIq4nlW1, qb::kIq4nlW2, qb::kIq4nlW3},
                                     {0x03020100u, 0x07060504u, 0x0b0a0908u, 0x0f0e0d0cu}};
        QRandomGenerator rng(38);
        for (const auto& t : tabs) {
            const auto check = [&](uint32_t w) {
                uint32_t lo = 0, hi = 0;
                qb::lut16_nibbles_perm(w, t[0], t[1], t[2], t[3], &lo, &hi, prmt);
                return lo == qb::lut16(w & 0x0f0f0f0fu, t[0], t[1], t[2], t[3]) &&
                       hi == qb::lut16((w >> 4) & 0x0f0f0f0fu, t[0], t[1], t[2], t[3]);
            };
            int bad = 0;
            for (uint32_t h = 0; h < 0x10000u; ++h) {
                const uint32_t other = rng.generate();
                bad += !check(h | (other << 16)) + !check((h << 16) | (other & 0xffffu));
            }
            for (int i = 0; i < 1 << 20; ++i) bad += !check(rng.generate());
            QCOMPARE(bad, 0);
        }
    }

    // iq4nl_two_dots (the GPU's ARBOR_MK_IQ4_TWO_DOTS) with an emulated prmt against dot32 on
    // the table values that lut16 writes out.
    void iq4nlTwoDotsMatchesDot32() {
        QRandomGenerator rng(39);
        int bad = 0;
        for (int i = 0; i < 1 << 18; ++i) {
            uint32_t w[4], a[8], q[8];
            for (auto& x : w) x = rng.generate();
            for (auto& x : a) x = rng.generate();
            if (i < 16) {  // every code in every position, against extreme activations
                for (auto& x : w) x = 0x11111111u * uint32_t(i);
                for (auto& x : a) x = i % 2 ? 0x80808080u : 0x7f7f7f7fu;
            }
            for (int j = 0; j < 4; ++j) {
                q[j] = qb::lut16(w[j] & 0x0f0f0f0fu, qb::kIq4nlW0, qb::kIq4nlW1, qb::kIq4nlW2, qb::kIq4nlW3);
                q[4 + j] = qb::lut16((w[j] >> 4) & 0x0f0f0f0fu, qb::kIq4nlW0, qb::kIq4nlW1, qb::kIq4nlW2, qb::kIq4nlW3);
            }
            bad += qb::iq4nl_two_dots(w, a, prmt) != qb::dot32(q, reinterpret_cast<const int8_t*>(a));
        }
        QCOMPARE(bad, 0);
    }

    void alignmentRule() {
        alignas(16) uint8_t buf[32] = {};
        QVERIFY(qb::packed_aligned<qb::Q4_K>(buf));
        QVERIFY(!qb::packed_aligned<qb::Q4_K>(buf + 2));
        QVERIFY(qb::packed_aligned<qb::Q6_K>(buf + 2));
        QVERIFY(!qb::packed_aligned<qb::Q6_K>(buf + 1));
        QVERIFY(qb::packed_aligned<qb::Q2_K>(buf + 1));
    }
};

QTEST_APPLESS_MAIN(TestPackedTerms)
#include "test_packed_terms.moc"
