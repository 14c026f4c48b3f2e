// The chat flows of issue 8 through the real QML, driven by the fake engine
// (data/fake_engine.json): send, stream and stop, edit into a branch and back, regenerate,
// delete and undo, search, a rejected drop, the status bar, reasoning, failures and overflow.
import QtQuick
import QtTest
import Arbor

TestCase {
    id: testCase
    name: "ChatFlows"
    when: windowShown

    Component {
        id: mainComponent
        Main {}
    }

    SignalSpy {
        id: finishedSpy
        target: ChatController
        signalName: "replyFinished"
    }

    function openWindow() {
        const w = createTemporaryObject(mainComponent, testCase)
        verify(w, "Main.qml failed to load")
        w.requestActivate()
        tryVerify(() => w.active, 5000, "the window never became active")
        if (!ChatController.modelLoaded)
            ChatController.useDemoModel()
        tryCompare(ChatController, "modelLoaded", true, 5000)
        ChatController.newChat()
        return w
    }
    function item(w, name) {
        const found = findChild(w.contentItem, name)
        verify(found, "missing item " + name)
        return found
    }
    function row(w, i) {
        const list = item(w, "messageList")
        list.forceLayout()
        return list.delegateAtRow(i)
    }
    // The first visible item named `name` under parentItem.
    function child(parentItem, name) {
        const found = visibleChild(parentItem, name)
        verify(found, "missing " + name)
        return found
    }
    function visibleChild(parentItem, name) {
        const kids = parentItem.children
        for (let i = 0; i < kids.length; ++i) {
            if (kids[i].objectName === name && kids[i].visible)
                return kids[i]
            const below = visibleChild(kids[i], name)
            if (below)
                return below
        }
        return null
    }
    // Types into the composer and presses Enter, as a user would; waits for the reply.
    function send(w, text, waitDone) {
        const input = item(w, "composerInput")
        input.forceActiveFocus()
        input.text = text
        finishedSpy.clear()
        keyClick(Qt.Key_Return)
        tryVerify(() => ChatController.generating || finishedSpy.count > 0, 1000, "Enter did not send")
        compare(input.text, "", "the composer is cleared once sent")
        if (waitDone !== false)
            waitReply(w)
    }
    function waitReply(w) {
        tryCompare(finishedSpy, "count", 1, 20000)
        tryCompare(ChatController, "generating", false)
        const list = item(w, "messageList")
        tryVerify(() => list.count > 0 && row(w, list.count - 1) && row(w, list.count - 1).messageState !== "streaming", 5000)
    }

    function test_1_sendMessage() {
        const w = openWindow()
        send(w, "hello there")
        const list = item(w, "messageList")
        compare(list.count, 2)
        compare(row(w, 0).messageRole, "user")
        compare(row(w, 0).messageText, "hello there")
        verify(/^Reply \d+ to: hello there$/.test(row(w, 1).messageText), row(w, 1).messageText)
        compare(row(w, 1).messageState, "complete")
        verify(child(row(w, 1), "proseText").text.indexOf("hello there") >= 0, "the reply is rendered")
        // The conversation is in the sidebar, titled by the first message, and open.
        const conversations = item(w, "conversationList")
        tryVerify(() => conversations.count >= 1)
        compare(ChatController.conversationTitle, "hello there")
        verify(ChatController.conversationId > 0)
    }

    function test_2_streamThenStop() {
        const w = openWindow()
        send(w, "tell me a long story", false)
        const stop = item(w, "stopButton")
        tryVerify(() => stop.visible)
        verify(!item(w, "sendButton").visible)
        tryVerify(() => row(w, 1) && row(w, 1).messageText.length > 20, 5000, "the reply streams in")
        verify(row(w, 1).streaming)
        compare(child(row(w, 1), "messageStateLabel").text, "writing…")
        keyClick(Qt.Key_Escape)
        waitReply(w)
        compare(finishedSpy.signalArguments[0][1], "interrupted")
        compare(row(w, 1).messageState, "interrupted")
        const text = row(w, 1).messageText
        verify(text.length > 20 && text.length < 400 * 10, "partial text kept: " + text.length)
        compare(child(row(w, 1), "messageStateLabel").text, "stopped")
        verify(item(w, "sendButton").visible)
    }

    function test_3_editMakesBranchThenSwitchBack() {
        const w = openWindow()
        send(w, "first question")
        mouseClick(child(row(w, 0), "editButton"))
        const edit = child(row(w, 0), "editInput")
        tryVerify(() => edit.visible)
        edit.text = "second question"
        mouseClick(child(row(w, 0), "editSave"))
        waitReply(w)
        tryVerify(() => row(w, 0) && row(w, 0).messageText === "second question")
        tryCompare(child(row(w, 0), "branchLabel"), "text", "2/2")
        verify(row(w, 1).messageText.indexOf("second question") > 0)
        // Back to the first branch: its reply is intact.
        mouseClick(child(row(w, 0), "branchPrev"))
        tryVerify(() => row(w, 0) && row(w, 0).messageText === "first question")
        compare(child(row(w, 0), "branchLabel").text, "1/2")
        tryVerify(() => row(w, 1).messageText.indexOf("first question") > 0)
        // And forward again with the keyboard (Alt+Right).
        keyClick(Qt.Key_Right, Qt.AltModifier)
        tryVerify(() => row(w, 0) && row(w, 0).messageText === "second question")
    }

    function test_4_regenerate() {
        const w = openWindow()
        send(w, "regenerate me")
        const first = row(w, 1).messageText
        verify(!visibleChild(row(w, 1), "branchSwitcher"), "no switcher without siblings")
        mouseClick(child(row(w, 1), "regenerateButton"))
        waitReply(w)
        tryCompare(child(row(w, 1), "branchLabel"), "text", "2/2")
        verify(row(w, 1).messageText !== first, "a new sibling reply")
        verify(visibleChild(row(w, 1), "branchSwitcher"))
        keyClick(Qt.Key_Up, Qt.ControlModifier)
        tryVerify(() => row(w, 1) && row(w, 1).messageText === first)
        compare(child(row(w, 1), "branchLabel").text, "1/2")
    }

    function test_5_deleteAndUndo() {
        const w = openWindow()
        send(w, "delete me please")
        const id = ChatController.conversationId
        const list = item(w, "conversationList")
        tryVerify(() => ChatController.conversations.rowOf(id) >= 0)
        const before = list.count
        const delegate = list.itemAtIndex(ChatController.conversations.rowOf(id))
        verify(delegate)
        mouseMove(delegate)
        mouseClick(child(delegate, "deleteButton"))
        tryCompare(list, "count", before - 1)
        compare(ChatController.conversationId, 0, "the deleted chat is closed")
        const toast = item(w, "undoToast")
        tryVerify(() => toast.visible)
        mouseClick(item(w, "undoButton"))
        tryCompare(list, "count", before)
        tryCompare(ChatController, "conversationId", id)
        verify(!toast.visible)
        tryCompare(item(w, "messageList"), "count", 2)
    }

    function test_6_search() {
        const w = openWindow()
        send(w, "apples are red")
        ChatController.newChat()
        send(w, "bananas are yellow")
        const search = item(w, "conversationSearch")
        const list = item(w, "conversationList")
        mouseClick(search)
        search.text = "banan"
        tryVerify(() => list.count === 1 && list.itemAtIndex(0) && list.itemAtIndex(0).conversationTitle === "bananas are yellow")
        search.text = "red"  // message text, through FTS
        tryVerify(() => list.count === 1 && list.itemAtIndex(0) && list.itemAtIndex(0).conversationTitle === "apples are red")
        search.text = "zebra"
        tryCompare(list, "count", 0)
        search.text = ""
        tryVerify(() => list.count >= 2)
        // Ctrl+F focuses the search field.
        item(w, "composerInput").forceActiveFocus()
        keyClick(Qt.Key_F, Qt.ControlModifier)
        verify(search.activeFocus)
    }

    function test_7_rejectedDropShowsWhy() {
        const w = openWindow()
        const errors = item(w, "importErrors")
        verify(!errors.visible)
        const drop = item(w, "dropArea")
        drop.importUrls([testDataUrl + "not-a-model.txt"])
        tryVerify(() => errors.visible, 5000)
        const text = item(w, "importErrorText").text
        verify(text.indexOf("not-a-model.txt") >= 0, text)
        verify(text.indexOf("not a GGUF file") >= 0, text)
        mouseClick(item(w, "dismissImportErrors"))
        tryVerify(() => !errors.visible)
        verify(ChatController.modelLoaded, "a rejected drop leaves the model alone")
    }

    function test_8_statusBarUpdates() {
        const w = openWindow()
        const speed = item(w, "statusSpeed")
        const context = item(w, "statusContext")
        send(w, "long story for the status bar", false)
        tryVerify(() => ChatController.contextUsed > 20, 5000)
        const during = ChatController.contextUsed
        tryVerify(() => ChatController.contextUsed > during, 5000, "context fill grows while streaming")
        tryVerify(() => /tok\/s · first token \d+ ms/.test(speed.text), 5000, speed.text)
        ChatController.stop()
        waitReply(w)
        verify(/^\d+\.\d tok\/s · first token \d+ ms$/.test(speed.text), speed.text)
        verify(ChatController.decodeTokS > 10, "fake engine: 10 ms a token")
        verify(/^context \d+ \/ 256$/.test(context.text), context.text)
        compare(item(w, "statusBackend").text, "fake · scripted")
        verify(item(w, "statusGpu").text.length > 0)
        verify(child(row(w, 1), "messageStats").text.indexOf("tok/s") > 0)
    }

    function test_9_reasoningIsCollapsible() {
        const w = openWindow()
        send(w, "think first")
        compare(row(w, 1).reasoningText, "Let me count.")
        compare(row(w, 1).messageText, "The answer is 4.")
        const block = child(row(w, 1), "reasoningBlock")
        verify(block.visible)
        const reasoning = findChild(block, "reasoningText")
        verify(reasoning && !reasoning.visible, "collapsed at first")
        mouseClick(child(block, "reasoningToggle"))
        verify(reasoning.visible)
        compare(reasoning.text, "Let me count.")
    }

    function test_10_failureShowsNotice() {
        const w = openWindow()
        send(w, "please fail now")
        compare(finishedSpy.signalArguments[0][1], "error")
        compare(row(w, 1).messageState, "error")
        compare(row(w, 1).messageText, "Half an answer")
        const notice = item(w, "noticeBar")
        verify(notice.visible)
        verify(item(w, "noticeText").text.indexOf("scripted failure") >= 0)
        mouseClick(item(w, "dismissNotice"))
        verify(!notice.visible)
    }

    function test_11_contextOverflowNotice() {
        const w = openWindow()
        const words = []
        for (let i = 0; i < 50; ++i)
            words.push("word" + i)
        const longText = words.join(" ")
        for (let k = 0; k < 3; ++k)
            send(w, longText + " turn " + k)
        verify(item(w, "noticeBar").visible, "the oldest turns were dropped from the context")
        verify(item(w, "noticeText").text.indexOf("left out") >= 0, item(w, "noticeText").text)
        compare(item(w, "messageList").count, 6, "nothing is dropped from the conversation")
    }

    function test_12_codeBlocksHaveCopy() {
        const w = openWindow()
        send(w, "code please")
        const code = child(row(w, 1), "codeText")
        compare(code.text, "print('hi')")
        verify(child(row(w, 1), "codeCopyButton").visible)
        compare(code.font.family, "monospace")
    }

    function test_13_newChatShortcut() {
        const w = openWindow()
        send(w, "something to leave")
        verify(ChatController.conversationId > 0)
        keyClick(Qt.Key_N, Qt.ControlModifier)
        compare(ChatController.conversationId, 0)
        tryCompare(item(w, "messageList"), "count", 0)
        const empty = item(w, "emptyState")
        tryVerify(() => empty.visible)  // the view's count signal comes with its next layout
    }
}
