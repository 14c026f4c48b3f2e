// The open chat's system prompt and sampler settings (a new chat keeps them until it starts).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

ScrollView {
    id: root
    objectName: "conversationSettings"
    clip: true

    function load() {
        const s = ChatController.conversationSettings()
        systemPrompt.text = s["systemPrompt"]
        temperature.value = Math.round(s["temperature"] * 100)
        topK.value = s["topK"]
        topP.value = Math.round(s["topP"] * 100)
        minP.value = Math.round(s["minP"] * 100)
        maxTokens.value = s["maxTokens"]
        seed.value = s["seed"]
        thinking.checked = s["enableThinking"]
    }
    function save() {
        ChatController.saveConversationSettings({
            systemPrompt: systemPrompt.text,
            temperature: temperature.value / 100,
            topK: topK.value,
            topP: topP.value / 100,
            minP: minP.value / 100,
            maxTokens: maxTokens.value,
            seed: seed.value,
            enableThinking: thinking.checked
        })
    }

    GridLayout {
        width: root.availableWidth
        columns: 2
        columnSpacing: 12
        rowSpacing: 8

        Label { text: qsTr("System prompt"); Layout.alignment: Qt.AlignTop }
        TextArea {
            id: systemPrompt
            objectName: "systemPromptInput"
            Layout.fillWidth: true
            Layout.preferredHeight: 90
            wrapMode: TextEdit.Wrap
            placeholderText: qsTr("How the assistant should behave (optional)")
            Accessible.name: qsTr("System prompt")
        }
        Label { text: qsTr("Temperature ×100") }
        SpinBox {
            id: temperature
            from: 0
            to: 300
            editable: true
            Accessible.name: qsTr("Temperature, in hundredths")
        }
        Label { text: qsTr("Top-k") }
        SpinBox {
            id: topK
            from: 0
            to: 1000
            editable: true
            Accessible.name: qsTr("Top-k")
        }
        Label { text: qsTr("Top-p ×100") }
        SpinBox {
            id: topP
            from: 1
            to: 100
            editable: true
            Accessible.name: qsTr("Top-p, in hundredths")
        }
        Label { text: qsTr("Min-p ×100") }
        SpinBox {
            id: minP
            from: 0
            to: 100
            editable: true
            Accessible.name: qsTr("Min-p, in hundredths")
        }
        Label { text: qsTr("Longest reply (tokens)") }
        SpinBox {
            id: maxTokens
            from: 1
            to: 32768
            editable: true
            Accessible.name: qsTr("Longest reply in tokens")
        }
        Label { text: qsTr("Seed (-1: random)") }
        SpinBox {
            id: seed
            from: -1
            to: 2147483647
            editable: true
            Accessible.name: qsTr("Random seed, -1 for a new one each reply")
        }
        Label { text: qsTr("Thinking") }
        Switch {
            id: thinking
            enabled: ChatController.thinkingSupported
            text: ChatController.thinkingSupported ? qsTr("Let the model reason first") : qsTr("This model's template has no thinking switch")
            Accessible.name: qsTr("Enable thinking")
        }
    }
}
