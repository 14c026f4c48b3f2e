// KV pages: the layout arithmetic, allocation within a budget, reference counts, fork with
// copy-on-write (a write into a shared page copies it and leaves the other owner's bytes
// alone), truncation, and release when sequences die.
#include <arbor/kv_cache.hpp>

#include <QtTest>

#include <cstring>

using namespace arbor;

namespace {

ModelConfig tinyConfig() {
    ModelConfig c;
    c.n_layer = 3;
    c.n_head = 4;
    c.n_head_kv = 2;
    c.head_dim_k = 16;
    c.head_dim_v = 8;
    return c;
}

}  // namespace

class TestKvCache : public QObject {
    Q_OBJECT

private slots:
    void layout() {
        const KvLayout l = KvLayout::for_model(tinyConfig(), KvType::F16);
        QCOMPARE(l.elem_bytes, 2);
        // Per layer: K [2 heads][256][16], V [2][256][8], halves.
        QCOMPARE(l.layer_bytes(), size_t(2 * 256 * (16 + 8) * 2));
        QCOMPARE(l.page_bytes, size_t(3) * l.layer_bytes());
        QCOMPARE(l.k_offset(0, 0), size_t(0));
        QCOMPARE(l.k_offset(0, 1), size_t(256 * 16 * 2));
        QCOMPARE(l.v_offset(0, 0), size_t(2 * 256 * 16 * 2));
        QCOMPARE(l.v_offset(1, 1), l.layer_bytes() + size_t(2 * 256 * 16 * 2 + 256 * 8 * 2));
        QCOMPARE(KvLayout::for_model(tinyConfig(), KvType::F32).page_bytes, 2 * l.page_bytes);
    }

    void budgetAndRelease() {
        auto cache = std::make_shared<KvCache>(tinyConfig(), KvType::F32, 3);
        {
            KvSequence a(cache, 10000);
            QVERIFY(a.prepare_write(0, 600).ok());  // 3 pages
            QCOMPARE(cache->pages_in_use(), 3);
            KvSequence b(cache, 10000);
            auto s = b.prepare_write(0, 1);
            QVERIFY(!s.ok());
            QVERIFY(QString::fromStdString(s.message()).contains("budget"));
            a.truncate(300);  // keeps 2 pages
            QCOMPARE(cache->pages_in_use(), 2);
            QVERIFY(b.prepare_write(0, 1).ok());
            QCOMPARE(cache->pages_in_use(), 3);
        }
        QCOMPARE(cache->pages_in_use(), 0);
        KvSequence c(cache, 100);
        QVERIFY(!c.prepare_write(0, 101).ok());  // beyond the context
        QVERIFY(c.prepare_write(0, 100).ok());
        // Fresh pages are zeroed, even when reused.
        const uint8_t* d = c.page_data(0);
        for (size_t i = 0; i < cache->layout().page_bytes; i += 97) QCOMPARE(int(d[i]), 0);
    }

    void forkCopyOnWrite() {
        auto cache = std::make_shared<KvCache>(tinyConfig(), KvType::F16, 16);
        KvSequence parent(cache, 4096);
        QVERIFY(parent.prepare_write(0, 400).ok());
        std::memset(parent.page_data(0), 0x11, cache->layout().page_bytes);
        std::memset(parent.page_data(1), 0x22, cache->layout().page_bytes);
        parent.set_size(400);
        auto child = parent.fork(300);
        QCOMPARE(child->size(), 300);
        QCOMPARE(child->pages().size(), size_t(2));
        QCOMPARE(child->pages()[0], parent.pages()[0]);
        QCOMPARE(cache->pages_in_use(), 2);
        QCOMPARE(cache->refcount(parent.pages()[1]), 2);
        // Writing cells 300.. touches page 1 only: it is copied, page 0 stays shared.
        QVERIFY(child->prepare_write(300, 310).ok());
        QCOMPARE(cache->pages_in_use(), 3);
        QVERIFY(child->pages()[1] != parent.pages()[1]);
        QCOMPARE(child->pages()[0], parent.pages()[0]);
        QCOMPARE(int(child->page_data(1)[5]), 0x22);  // the copy holds the parent's bytes
        std::memset(child->page_data(1), 0x33, 16);
        QCOMPARE(int(parent.page_data(1)[0]), 0x22);  // the parent does not see the write
        auto fork2 = parent.fork(1000);                 // clamped to the parent's size
        QCOMPARE(fork2->size(), 400);
        fork2.reset();
        child.reset();
        QCOMPARE(cache->pages_in_use(), 2);
        QCOMPARE(cache->refcount(parent.pages()[0]), 1);
    }
};

QTEST_GUILESS_MAIN(TestKvCache)
#include "test_kv_cache.moc"
