// First run without a model: the empty state with the drop hint and "Try the demo model",
// the composer disabled with the reason; the demo button loads the bundled model.
import QtQuick
import QtTest
import Arbor

TestCase {
    id: testCase
    name: "FirstRun"
    when: windowShown

    Component {
        id: mainComponent
        Main {}
    }

    function item(w, name) {
        const found = findChild(w.contentItem, name)
        verify(found, "missing item " + name)
        return found
    }

    function test_emptyStateThenDemoModel() {
        const w = createTemporaryObject(mainComponent, testCase)
        verify(w)
        w.requestActivate()
        tryVerify(() => w.active)
        compare(ChatController.modelState, "none")
        compare(ChatController.library.count, 0)
        verify(item(w, "emptyState").visible)
        verify(item(w, "dropHint").visible)
        verify(item(w, "dropHint").text.indexOf(".gguf") >= 0)
        const demo = item(w, "tryDemoButton")
        verify(demo.visible && demo.enabled)
        compare(demo.text, "Try the demo model")
        const input = item(w, "composerInput")
        verify(!input.enabled)
        const hint = item(w, "composerHint")
        verify(hint.visible)
        verify(hint.text.indexOf("Load a model") === 0, hint.text)
        compare(item(w, "modelPickerName").text, "No model ▾")

        waitForRendering(w.contentItem)  // laid out: the click lands on the button
        mouseClick(demo)
        tryCompare(ChatController, "modelLoaded", true, 5000)
        compare(ChatController.library.count, 1)
        verify(ChatController.modelPath.endsWith("stories260K.gguf"), ChatController.modelPath)
        tryVerify(() => input.enabled)
        verify(!hint.visible)
        tryVerify(() => !demo.visible)
        compare(item(w, "modelPickerName").text, "Fake Stories")
        verify(/^llama · \S+ · [\d.]+ MB · \d+ ctx$/.test(item(w, "modelPickerSummary").text), item(w, "modelPickerSummary").text)
        verify(item(w, "startHint").visible)
        compare(ChatController.settings.defaultModel, ChatController.modelPath, "the choice is remembered")
    }
}
