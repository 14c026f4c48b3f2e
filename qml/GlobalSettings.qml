// Arbor's settings: data folder (chosen with --data-dir), default model, context overflow
// policy, threads, backend, park-file budget and theme. Changes apply at once; threads and
// backend take effect the next time a model loads.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

ScrollView {
    id: root
    objectName: "globalSettings"
    clip: true
    readonly property AppSettings settings: ChatController.settings

    GridLayout {
        width: root.availableWidth
        columns: 2
        columnSpacing: 12
        rowSpacing: 8

        Label { text: qsTr("Data folder") }
        Label {
            Layout.fillWidth: true
            text: root.settings.dataDir.length > 0 ? root.settings.dataDir : qsTr("(none)")
            wrapMode: Text.WrapAnywhere
            ToolTip.visible: dataHover.hovered
            ToolTip.text: qsTr("Start Arbor with --data-dir DIR to use another folder.")
            HoverHandler {
                id: dataHover
            }
        }
        Label { text: qsTr("Default model") }
        Label {
            Layout.fillWidth: true
            text: root.settings.defaultModel.length > 0 ? root.settings.defaultModel : qsTr("the last one used")
            elide: Text.ElideMiddle
        }
        Label { text: qsTr("When a chat outgrows the context") }
        ComboBox {
            objectName: "contextPolicyBox"
            Layout.fillWidth: true
            textRole: "label"
            valueRole: "value"
            model: [
                { value: "keep-newest", label: qsTr("Keep the system prompt and the newest turns") },
                { value: "refuse", label: qsTr("Stop and tell me") }
            ]
            Component.onCompleted: currentIndex = indexOfValue(root.settings.contextPolicy)
            onActivated: root.settings.contextPolicy = currentValue
            Accessible.name: qsTr("Context overflow policy")
        }
        Label { text: qsTr("Threads (0: all)") }
        SpinBox {
            from: 0
            to: 256
            editable: true
            value: root.settings.threads
            onValueModified: root.settings.threads = value
            Accessible.name: qsTr("CPU threads")
        }
        Label { text: qsTr("Backend") }
        ComboBox {
            Layout.fillWidth: true
            textRole: "label"
            valueRole: "value"
            model: [
                { value: "auto", label: qsTr("GPU when available") },
                { value: "gpu", label: qsTr("GPU") },
                { value: "cpu", label: qsTr("CPU") }
            ]
            Component.onCompleted: currentIndex = indexOfValue(root.settings.backendPreference)
            onActivated: root.settings.backendPreference = currentValue
            Accessible.name: qsTr("Backend preference")
        }
        Label { text: qsTr("Parked contexts (MB on disk)") }
        SpinBox {
            from: 0
            to: 1048576
            stepSize: 256
            editable: true
            value: root.settings.parkBudgetMb
            onValueModified: root.settings.parkBudgetMb = value
            Accessible.name: qsTr("Disk budget for parked contexts in megabytes")
        }
        Label { text: qsTr("Theme") }
        ComboBox {
            Layout.fillWidth: true
            textRole: "label"
            valueRole: "value"
            model: [
                { value: "system", label: qsTr("Follow the system") },
                { value: "light", label: qsTr("Light") },
                { value: "dark", label: qsTr("Dark") }
            ]
            Component.onCompleted: currentIndex = indexOfValue(root.settings.theme)
            onActivated: root.settings.theme = currentValue
            Accessible.name: qsTr("Theme")
        }
    }
}
