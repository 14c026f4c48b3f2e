// The model details pane: what `arbor-cli info` shows about a library entry.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Dialog {
    id: root
    objectName: "modelDetails"
    property int row: -1
    readonly property var info: row >= 0 && ChatController.library.count > row ? ChatController.library.details(row) : ({})
    title: root.info.name || qsTr("Model details")
    modal: true
    standardButtons: Dialog.Close
    width: 520

    readonly property var fields: [
        { key: "path", label: qsTr("File") },
        { key: "architecture", label: qsTr("Architecture") },
        { key: "parameters", label: qsTr("Parameters") },
        { key: "quant_type", label: qsTr("Main tensor type") },
        { key: "file_size", label: qsTr("Size") },
        { key: "context_length", label: qsTr("Context length") },
        { key: "block_count", label: qsTr("Layers") },
        { key: "head_count", label: qsTr("Attention heads") },
        { key: "vocab_size", label: qsTr("Vocabulary") },
        { key: "has_chat_template", label: qsTr("Chat template") },
        { key: "fingerprint", label: qsTr("Fingerprint") },
        { key: "missing", label: qsTr("File missing") }
    ]

    GridLayout {
        anchors.fill: parent
        columns: 2
        columnSpacing: 16
        rowSpacing: 6
        Repeater {
            model: root.fields
            delegate: Label {
                required property var modelData
                required property int index
                Layout.row: index
                Layout.column: 0
                text: modelData.label
                opacity: 0.7
            }
        }
        Repeater {
            model: root.fields
            delegate: Label {
                required property var modelData
                required property int index
                Layout.row: index
                Layout.column: 1
                Layout.fillWidth: true
                text: {
                    const v = root.info[modelData.key]
                    if (v === undefined || v === null || v === "") return "—"
                    if (v === true) return qsTr("yes")
                    if (v === false) return qsTr("no")
                    return String(v)
                }
                wrapMode: Text.WrapAnywhere
                Accessible.name: modelData.label
            }
        }
    }
}
