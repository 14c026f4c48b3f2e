// The model's reasoning (<think>…</think>), collapsed to one line unless opened.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ColumnLayout {
    id: root
    objectName: "reasoningBlock"
    property string reasoning
    property bool streaming: false
    property bool expanded: false
    spacing: 4


    ToolButton {
        id: toggle
        objectName: "reasoningToggle"
        text: (root.expanded ? "▾ " : "▸ ") + (root.streaming ? qsTr("Thinking…") : qsTr("Reasoning"))
        font.pixelSize: 12
        Accessible.name: root.expanded ? qsTr("Hide the reasoning") : qsTr("Show the reasoning")
        onClicked: root.expanded = !root.expanded
    }
    TextEdit {
        objectName: "reasoningText"
        Layout.fillWidth: true
        visible: root.expanded
        readOnly: true
        selectByMouse: true
        wrapMode: TextEdit.Wrap
        text: root.reasoning
        color: toggle.palette.text
        opacity: 0.7
        font.italic: true
        Accessible.name: qsTr("Reasoning")
    }
}
