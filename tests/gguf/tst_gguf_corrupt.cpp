// The corrupt-file corpus: every case must end in a clean error (or, for single-byte flips,
// possibly a valid file), with no crash, no hang and allocations bounded by the input size.
// The cases are also written to <build>/tests/gguf/gguf-corpus to seed the fuzzer.
#include "corrupt_corpus.hpp"
#include "gguf_fixtures.hpp"
#include "test_data.hpp"

#include <QDir>
#include <QElapsedTimer>
#include <QtTest>

#include <atomic>
#include <cstdlib>
#include <new>

// Allocation accounting for this test binary: live bytes and the peak since the last reset.
namespace {
std::atomic<int64_t> g_live{0}, g_peak{0};
}
void* operator new(size_t n) {
    void* p = std::malloc(n + 16);
    if (!p) throw std::bad_alloc();
    *static_cast<size_t*>(p) = n;
    const int64_t live = g_live += static_cast<int64_t>(n);
    int64_t peak = g_peak.load();
    while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {}
    return static_cast<char*>(p) + 16;
}
void operator delete(void* p) noexcept {
    if (!p) return;
    char* base = static_cast<char*>(p) - 16;
    g_live -= static_cast<int64_t>(*reinterpret_cast<size_t*>(base));
    std::free(base);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }

using arbor::GgufFile;

class TestGgufCorrupt : public QObject {
    Q_OBJECT

    void runCorpus(const std::vector<uint8_t>& valid, const std::string& label, int* failed_clean) {
        QVERIFY(!valid.empty());
        {
            auto ok = GgufFile::parse(std::span<const uint8_t>(valid.data(), valid.size()), label);
            QVERIFY2(ok.ok(), ok.ok() ? "" : ok.message().c_str());
        }
        const auto corpus = arbor::test::make_corrupt_corpus(valid, label);
        QVERIFY(corpus.size() > 100);
        const QString outDir = QDir::currentPath() + "/gguf-corpus";
        QDir().mkpath(outDir);
        int written = 0;
        for (const auto& c : corpus) {
            const int64_t base = g_live.load();
            g_peak = base;
            QElapsedTimer t;
            t.start();
            auto r = GgufFile::parse(std::span<const uint8_t>(c.bytes.data(), c.bytes.size()), c.name);
            const qint64 ms = t.elapsed();
            const int64_t extra = g_peak.load() - base;
            QVERIFY2(ms < 2000, qPrintable(QString::fromStdString(c.name) + " took too long"));
            // Bounded by the input: a small multiple of its size plus a fixed allowance.
            const int64_t bound = 32 * static_cast<int64_t>(c.bytes.size()) + (1 << 16);
            QVERIFY2(extra <= bound, qPrintable(QString::fromStdString(c.name) + QStringLiteral(" allocated %1 bytes").arg(extra)));
            if (c.must_fail) {
                QVERIFY2(!r.ok(), qPrintable(QString::fromStdString(c.name) + " was accepted"));
            }
            if (!r.ok()) {
                const std::string& m = r.message();
                QVERIFY2(!m.empty() && m.find('\n') == std::string::npos, c.name.c_str());
                // The message says where: a byte offset, a tensor, or a key.
                QVERIFY2(m.find("byte") != std::string::npos || m.find("tensor") != std::string::npos ||
                             m.find("key") != std::string::npos || m.find("GGUF") != std::string::npos,
                         m.c_str());
                ++*failed_clean;
            }
            if (written < 400 && (written % 1 == 0)) {
                QFile f(outDir + QStringLiteral("/case-%1").arg(written++));
                if (f.open(QIODevice::WriteOnly)) f.write(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
            }
        }
    }

private slots:
    void fixtureCorpus() {
        int failed = 0;
        runCorpus(arbor::test::fixture_bytes(), "fixture", &failed);
        QVERIFY(failed > 100);
    }

    void fixtureCorpusAligned64() {
        int failed = 0;
        runCorpus(arbor::test::fixture_bytes(64), "fixture64", &failed);
        QVERIFY(failed > 100);
    }

    void storiesHeaderTruncations() {
        // The real model: truncations at every structure boundary of its header.
        const QString path = arbor::test::sourceDir() + "/resources/models/stories260K.gguf";
        ARBOR_REQUIRE_PATH(path);
        const auto valid = arbor::test::read_all(path);
        const auto cuts = arbor::test::gguf_structure_boundaries(valid);
        QVERIFY(cuts.size() > 50);
        for (uint64_t cut : cuts) {
            auto r = GgufFile::parse(std::span<const uint8_t>(valid.data(), cut), "stories-truncated");
            QVERIFY2(!r.ok(), qPrintable(QStringLiteral("truncation at %1 accepted").arg(cut)));
        }
        auto r = GgufFile::parse(std::span<const uint8_t>(valid.data(), valid.size() - 1), "stories-minus-one");
        QVERIFY(!r.ok());
        QVERIFY2(r.message().find("output.weight") != std::string::npos || r.message().find("tensor") != std::string::npos,
                 r.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestGgufCorrupt)
#include "tst_gguf_corrupt.moc"
