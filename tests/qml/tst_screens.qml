// Screenshots of the real window in several states, rendered offscreen: the empty first run,
// a conversation with a branch, a reply streaming, and a dropped file that was rejected.
// They are written to $ARBOR_SCREENSHOT_DIR when it is set (see the README).
import QtQuick
import QtTest
import Arbor

TestCase {
    id: testCase
    name: "Screens"
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

    function item(w, name) {
        const found = findChild(w.contentItem, name)
        verify(found, "missing item " + name)
        return found
    }
    // Grabs the window; checks it is a real picture (many colours); saves it when asked.
    function shoot(w, name) {
        waitForRendering(w.contentItem)
        const img = grabImage(w.contentItem)
        compare(img.width, w.contentItem.width)
        compare(img.height, w.contentItem.height)
        const colours = {}
        let n = 0
        for (let y = 0; y < img.height; y += 9)
            for (let x = 0; x < img.width; x += 9) {
                const c = img.pixel(x, y)
                if (!colours[c]) {
                    colours[c] = true
                    ++n
                }
            }
        verify(n > 5, name + " is (nearly) one colour")
        if (screenshotDir.length > 0)
            img.save(screenshotDir + "/" + name + ".png")
    }
    function send(w, text) {
        const input = item(w, "composerInput")
        input.forceActiveFocus()
        input.text = text
        finishedSpy.clear()
        keyClick(Qt.Key_Return)
    }

    function test_screens() {
        const w = createTemporaryObject(mainComponent, testCase)
        verify(w)
        w.requestActivate()
        tryVerify(() => w.active)
        shoot(w, "ui-empty-first-run")

        ChatController.useDemoModel()
        tryCompare(ChatController, "modelLoaded", true, 5000)
        send(w, "code please")
        tryCompare(finishedSpy, "count", 1, 10000)
        send(w, "think first")
        tryCompare(finishedSpy, "count", 1, 10000)
        // A branch: regenerate the last reply.
        ChatController.regenerate(3)
        tryCompare(finishedSpy, "count", 2, 10000)
        const list = item(w, "messageList")
        tryVerify(() => list.delegateAtRow(3) && list.delegateAtRow(3).siblingCount === 2)
        shoot(w, "ui-conversation-with-branch")

        ChatController.newChat()
        send(w, "tell me a long story")
        tryVerify(() => list.delegateAtRow(1) && list.delegateAtRow(1).messageText.length > 200, 10000)
        shoot(w, "ui-streaming")
        ChatController.stop()
        tryCompare(ChatController, "generating", false, 5000)

        item(w, "dropArea").importUrls([testDataUrl + "not-a-model.txt"])
        tryVerify(() => item(w, "importErrors").visible, 5000)
        shoot(w, "ui-dropped-file-error")
    }
}
